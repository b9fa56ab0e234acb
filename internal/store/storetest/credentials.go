package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// RunCredentials is the conformance suite for store.Credentials. open
// returns a new, empty store for each subtest; if it is an io.Closer,
// RunCredentials closes it when the subtest ends.
//
// Besides the interface's comments, the suite pins down:
//   - a credential is found by the hash of its secret and its kind
//     only: the same hash under another kind is not found;
//   - a login link is used at most once, even by concurrent users, and
//     never after it expired or was revoked;
//   - a revocation keeps its first time.
func RunCredentials(t *testing.T, open func(t *testing.T) store.Credentials) {
	t.Helper()
	runCases(t, open, credentialTests)
}

func hashOf(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func link(id, secret string, ttl time.Duration) store.Credential {
	return store.Credential{ID: id, Kind: store.LoginLink, Hash: hashOf(secret), By: "uid 1000 pid 42 via admin socket",
		Created: base, Expires: base.Add(ttl)}
}

var credentialTests = []testCase[store.Credentials]{
	{"round trip by hash and kind", func(t *testing.T, s store.Credentials) {
		ctx := context.Background()
		c := store.Credential{ID: "t1", Kind: store.APIToken, Hash: hashOf("secret-1"), Name: "ci", Scopes: []string{"read", "approve"},
			By: "uid 1000 pid 7 via admin socket", Created: base, Expires: base.Add(time.Hour)}
		if err := s.AddCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.CredentialByHash(ctx, store.APIToken, hashOf("secret-1"))
		if err != nil {
			t.Fatal(err)
		}
		got.Created, got.Expires = got.Created.UTC(), got.Expires.UTC()
		same(t, "token", got, c)
		if got.Hash != c.Hash {
			t.Errorf("hash %q, want %q", got.Hash, c.Hash)
		}
		if _, err := s.CredentialByHash(ctx, store.ConsoleSession, hashOf("secret-1")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a token's hash as a session: %v, want ErrNotFound", err)
		}
		if _, err := s.CredentialByHash(ctx, store.APIToken, hashOf("secret-2")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown hash: %v, want ErrNotFound", err)
		}
		if err := s.AddCredential(ctx, c); err == nil {
			t.Error("the same id and hash stored twice")
		}
	}},
	{"a login link is used once", func(t *testing.T, s store.Credentials) {
		ctx := context.Background()
		if err := s.AddCredential(ctx, link("l1", "s1", time.Minute)); err != nil {
			t.Fatal(err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			won  int
			lost int
		)
		for range 8 {
			wg.Go(func() {
				_, err := s.UseCredential(ctx, store.LoginLink, hashOf("s1"), base.Add(time.Second))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, store.ErrCredentialSpent):
					lost++
				default:
					t.Errorf("use: %v", err)
				}
			})
		}
		wg.Wait()
		if won != 1 || lost != 7 {
			t.Fatalf("%d uses won and %d lost, want 1 and 7", won, lost)
		}
		got, err := s.CredentialByHash(ctx, store.LoginLink, hashOf("s1"))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Used.Equal(base.Add(time.Second)) || got.Live(base.Add(time.Second)) {
			t.Errorf("used link: used %v, live %v", got.Used, got.Live(base.Add(time.Second)))
		}
		if _, err := s.UseCredential(ctx, store.LoginLink, hashOf("nope"), base); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown link: %v, want ErrNotFound", err)
		}
	}},
	{"an expired or revoked link is not used", func(t *testing.T, s store.Credentials) {
		ctx := context.Background()
		for _, c := range []store.Credential{link("old", "old", time.Minute), link("rev", "rev", time.Hour)} {
			if err := s.AddCredential(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.UseCredential(ctx, store.LoginLink, hashOf("old"), base.Add(time.Minute)); !errors.Is(err, store.ErrCredentialSpent) {
			t.Errorf("link used at its expiry: %v, want ErrCredentialSpent", err)
		}
		if err := s.RevokeCredential(ctx, store.LoginLink, "rev", base.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UseCredential(ctx, store.LoginLink, hashOf("rev"), base.Add(2*time.Second)); !errors.Is(err, store.ErrCredentialSpent) {
			t.Errorf("revoked link: %v, want ErrCredentialSpent", err)
		}
	}},
	{"revoke, list, purge", func(t *testing.T, s store.Credentials) {
		ctx := context.Background()
		for i, id := range []string{"a", "b", "c"} {
			c := store.Credential{ID: id, Kind: store.ConsoleSession, Hash: hashOf(id), Parent: "l1", By: "x", Remote: "127.0.0.1:5",
				Created: base.Add(time.Duration(i) * time.Second), Expires: base.Add(time.Duration(i+1) * time.Hour)}
			if err := s.AddCredential(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RevokeCredential(ctx, store.ConsoleSession, "a", base.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeCredential(ctx, store.ConsoleSession, "a", base.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeCredential(ctx, store.APIToken, "a", base); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke a session as a token: %v, want ErrNotFound", err)
		}
		n, err := s.RevokeCredentials(ctx, store.ConsoleSession, base.Add(3*time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("revoke all: %d %v, want 2", n, err)
		}
		list, err := s.ListCredentials(ctx, store.ConsoleSession)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[0].ID != "a" || list[2].ID != "c" {
			t.Fatalf("list: %+v", list)
		}
		if !list[0].Revoked.Equal(base.Add(time.Minute)) || !list[1].Revoked.Equal(base.Add(3*time.Minute)) {
			t.Errorf("revoked at %v and %v", list[0].Revoked, list[1].Revoked)
		}
		if list[1].Live(base) {
			t.Error("a revoked session is live")
		}
		if n, err := s.PurgeCredentials(ctx, base.Add(2*time.Hour+time.Second)); err != nil || n != 2 {
			t.Errorf("purge: %d %v, want 2", n, err)
		}
		if list, _ := s.ListCredentials(ctx, store.ConsoleSession); len(list) != 1 || list[0].ID != "c" {
			t.Errorf("after purge: %+v", list)
		}
	}},
}
