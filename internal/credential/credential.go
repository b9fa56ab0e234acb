// Package credential issues and checks the secrets that reach warden's
// console and HTTP API: one-time login links, the console sessions they
// start, and API tokens for scripts. There is no long-lived secret in a
// file: a human gets a login link from `warden console`, which asks the
// host over the admin socket (so only a process that proved it runs
// outside every tool sandbox can get one), and a script gets a token
// that `warden token create` showed once.
//
// The store keeps the SHA-256 of each secret, never the secret, so
// reading the database gives nothing that authenticates. Every secret
// carries a prefix naming its kind (wdl_ login link, wds_ console
// session, wdt_ API token) and 32 random bytes; a secret of one kind is
// never accepted as another.
//
// A login link is used at most once (a compare-and-swap in the store)
// and lives a few minutes; a console session and a token expire, and
// can be revoked at once (the check reads the store every time).
package credential

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/wardenhq/warden/internal/store"
)

// Sentinel errors callers branch on.
var (
	// ErrInvalid: the secret is unknown, expired, revoked or (a login
	// link) already used. Callers say no more than that.
	ErrInvalid = errors.New("invalid or expired credential")
	// ErrScope: the credential is valid but its scopes do not allow
	// what was asked.
	ErrScope = errors.New("credential's scope does not allow this")
)

// Scope is what an API token may do.
type Scope string

// Scopes, each including the one before it.
const (
	// Read sees everything the console shows: pending requests,
	// sessions, grants, the audit log, cron, the board, the event
	// stream.
	Read Scope = "read"
	// Approve also answers pending requests: once, for the session, or
	// deny, and MCP servers' questions. It cannot record an "always"
	// grant, which changes policy.
	Approve Scope = "approve"
	// Admin does everything the console can: always-grants, yolo,
	// revoking grants, running commands and the agent in a session,
	// starting cron runs, commenting on tasks.
	Admin Scope = "admin"
)

// rank orders the scopes: each includes those of lower rank.
var rank = map[Scope]int{Read: 1, Approve: 2, Admin: 3}

// AllScopes lists the scopes, least first.
var AllScopes = []Scope{Read, Approve, Admin}

// ParseScopes checks scope names ("read", "approve,admin", …) and
// returns them sorted, without repeats. At least one is needed.
func ParseScopes(names []string) ([]Scope, error) {
	var out []Scope
	for _, n := range names {
		for part := range strings.SplitSeq(n, ",") {
			s := Scope(strings.ToLower(strings.TrimSpace(part)))
			if s == "" {
				continue
			}
			if rank[s] == 0 {
				return nil, fmt.Errorf("unknown scope %q (want read, approve or admin)", part)
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no scope (want read, approve or admin)")
	}
	slices.SortFunc(out, func(a, b Scope) int { return rank[a] - rank[b] })
	return out, nil
}

// Allows reports whether scopes include need.
func Allows(scopes []string, need Scope) bool {
	for _, s := range scopes {
		if rank[Scope(s)] >= rank[need] {
			return true
		}
	}
	return false
}

// Secret prefixes, one per kind.
const (
	loginPrefix   = "wdl_"
	sessionPrefix = "wds_"
	tokenPrefix   = "wdt_"
)

func prefixOf(k store.CredentialKind) string {
	switch k {
	case store.LoginLink:
		return loginPrefix
	case store.ConsoleSession:
		return sessionPrefix
	}
	return tokenPrefix
}

// Hash is what the store keeps of a secret: its hex SHA-256.
func Hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// newSecret returns a new secret of kind: its prefix and 32 random
// bytes, base64url.
func newSecret(k store.CredentialKind) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefixOf(k) + base64.RawURLEncoding.EncodeToString(b)
}

// CSRF is a console session's CSRF token, derived from the session's
// secret (so it survives a restart without being stored): knowing it
// does not give the secret.
func CSRF(sessionSecret string) string {
	m := hmac.New(sha256.New, []byte(sessionSecret))
	m.Write([]byte("warden console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Defaults and bounds.
const (
	DefaultLoginTTL   = 5 * time.Minute
	MaxLoginTTL       = time.Hour
	DefaultSessionTTL = 12 * time.Hour
	DefaultTokenTTL   = 30 * 24 * time.Hour
	MaxTokenTTL       = 366 * 24 * time.Hour
	// purgeAfter is how long an expired credential stays listed.
	purgeAfter = 7 * 24 * time.Hour
)

// Service issues and checks credentials.
type Service struct {
	Store store.Credentials
	// SessionTTL bounds a console login; zero means DefaultSessionTTL.
	SessionTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Service) sessionTTL() time.Duration {
	if s.SessionTTL <= 0 {
		return DefaultSessionTTL
	}
	return s.SessionTTL
}

// Issued is a new credential with its secret, which exists only here:
// show it once and forget it.
type Issued struct {
	store.Credential
	Secret string
}

func newID() string { return ulid.Make().String() }

// IssueLogin makes a one-time login link valid for ttl (zero:
// DefaultLoginTTL; at most MaxLoginTTL). by is the proven identity that
// asked for it.
func (s *Service) IssueLogin(ctx context.Context, by string, ttl time.Duration) (Issued, error) {
	switch {
	case ttl == 0:
		ttl = DefaultLoginTTL
	case ttl < 0 || ttl > MaxLoginTTL:
		return Issued{}, fmt.Errorf("login link lifetime %v: want at most %v", ttl, MaxLoginTTL)
	}
	return s.issue(ctx, store.Credential{Kind: store.LoginLink, By: by}, ttl)
}

// IssueToken makes an API token with scopes, valid for ttl (zero:
// DefaultTokenTTL; at most MaxTokenTTL). by is the proven identity
// that asked for it.
func (s *Service) IssueToken(ctx context.Context, name string, scopes []Scope, ttl time.Duration, by string) (Issued, error) {
	switch {
	case ttl == 0:
		ttl = DefaultTokenTTL
	case ttl < 0 || ttl > MaxTokenTTL:
		return Issued{}, fmt.Errorf("token lifetime %v: want at most %v", ttl, MaxTokenTTL)
	case len(scopes) == 0:
		return Issued{}, errors.New("a token needs a scope (read, approve or admin)")
	case len(name) > 64:
		return Issued{}, errors.New("token name longer than 64 bytes")
	}
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		if rank[sc] == 0 {
			return Issued{}, fmt.Errorf("unknown scope %q", sc)
		}
		names[i] = string(sc)
	}
	return s.issue(ctx, store.Credential{Kind: store.APIToken, Name: clean(name), Scopes: names, By: by}, ttl)
}

func (s *Service) issue(ctx context.Context, c store.Credential, ttl time.Duration) (Issued, error) {
	secret := newSecret(c.Kind)
	now := s.now()
	c.ID, c.Hash, c.Created, c.Expires = newID(), Hash(secret), now, now.Add(ttl)
	if err := s.Store.AddCredential(ctx, c); err != nil {
		return Issued{}, err
	}
	return Issued{Credential: c, Secret: secret}, nil
}

// Login uses a login link's secret (once) and starts a console session
// from it; remote is where the browser connected from. An unknown,
// used, expired or revoked link is ErrInvalid.
func (s *Service) Login(ctx context.Context, linkSecret, remote string) (Issued, error) {
	if !strings.HasPrefix(linkSecret, loginPrefix) {
		return Issued{}, ErrInvalid
	}
	link, err := s.Store.UseCredential(ctx, store.LoginLink, Hash(linkSecret), s.now())
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrCredentialSpent):
		return Issued{}, ErrInvalid
	case err != nil:
		return Issued{}, err
	}
	return s.issue(ctx, store.Credential{Kind: store.ConsoleSession, Parent: link.ID, By: link.By, Remote: clean(remote)}, s.sessionTTL())
}

// Session returns the live console session whose cookie is secret, or
// ErrInvalid.
func (s *Service) Session(ctx context.Context, secret string) (store.Credential, error) {
	return s.lookup(ctx, store.ConsoleSession, secret)
}

// Token returns the live API token secret, or ErrInvalid.
func (s *Service) Token(ctx context.Context, secret string) (store.Credential, error) {
	return s.lookup(ctx, store.APIToken, secret)
}

func (s *Service) lookup(ctx context.Context, k store.CredentialKind, secret string) (store.Credential, error) {
	if !strings.HasPrefix(secret, prefixOf(k)) {
		return store.Credential{}, ErrInvalid
	}
	c, err := s.Store.CredentialByHash(ctx, k, Hash(secret))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Credential{}, ErrInvalid
	case err != nil:
		return store.Credential{}, err
	case !c.Live(s.now()):
		return store.Credential{}, ErrInvalid
	}
	return c, nil
}

// List lists the credentials of kind, oldest first.
func (s *Service) List(ctx context.Context, k store.CredentialKind) ([]store.Credential, error) {
	return s.Store.ListCredentials(ctx, k)
}

// Revoke revokes credential id of kind now (store.ErrNotFound if there
// is none). A revoked session or token fails its next request.
func (s *Service) Revoke(ctx context.Context, k store.CredentialKind, id string) error {
	return s.Store.RevokeCredential(ctx, k, id, s.now())
}

// RevokeAll revokes every credential of kind and returns how many.
func (s *Service) RevokeAll(ctx context.Context, k store.CredentialKind) (int, error) {
	return s.Store.RevokeCredentials(ctx, k, s.now())
}

// Purge forgets credentials that expired more than a week ago.
func (s *Service) Purge(ctx context.Context) (int, error) {
	return s.Store.PurgeCredentials(ctx, s.now().Add(-purgeAfter))
}

// Describe is the identity a credential proves, for audit records and
// answers: "console session ID (login link LINK issued 2025-03-01
// 12:00:00Z to uid 1000 pid 4242 via admin socket, outside sandboxes)"
// or `api token ID "ci" [approve] (created … by …)`.
func Describe(c store.Credential) string {
	at := c.Created.UTC().Format(time.RFC3339)
	switch c.Kind {
	case store.ConsoleSession:
		return fmt.Sprintf("console session %s (login link %s, used %s, issued to %s)", c.ID, c.Parent, at, c.By)
	case store.APIToken:
		name := ""
		if c.Name != "" {
			name = fmt.Sprintf(" %q", c.Name)
		}
		return fmt.Sprintf("api token %s%s [%s] (created %s by %s)", c.ID, name, strings.Join(c.Scopes, ","), at, c.By)
	}
	return fmt.Sprintf("%s %s (issued %s to %s)", c.Kind, c.ID, at, c.By)
}

// clean keeps printable text only (names and addresses end up in lists
// and records).
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}
