package credential

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store/sqlite"
)

func TestParseScopes(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
		ok   bool
	}{
		{[]string{"read"}, "read", true},
		{[]string{"admin,read", "READ"}, "read,admin", true},
		{[]string{" approve "}, "approve", true},
		{[]string{"root"}, "", false},
		{[]string{""}, "", false},
		{nil, "", false},
	} {
		got, err := ParseScopes(tt.in)
		var names []string
		for _, s := range got {
			names = append(names, string(s))
		}
		if (err == nil) != tt.ok || strings.Join(names, ",") != tt.want {
			t.Errorf("ParseScopes(%q) = %v, %v", tt.in, names, err)
		}
	}
	for _, tt := range []struct {
		have []string
		need Scope
		ok   bool
	}{
		{[]string{"read"}, Read, true}, {[]string{"read"}, Approve, false}, {[]string{"approve"}, Read, true},
		{[]string{"approve"}, Admin, false}, {[]string{"admin"}, Approve, true}, {nil, Read, false}, {[]string{"bogus"}, Read, false},
	} {
		if Allows(tt.have, tt.need) != tt.ok {
			t.Errorf("Allows(%v, %s) = %v", tt.have, tt.need, !tt.ok)
		}
	}
}

// TestNothingInClear: what the database holds of a token, a login link
// and a session is their hashes; no secret appears in any column.
func TestNothingInClear(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &Service{Store: db}
	tok, err := s.IssueToken(ctx, "ci", []Scope{Read}, time.Hour, "uid 1 pid 2 via admin socket, outside sandboxes")
	if err != nil {
		t.Fatal(err)
	}
	link, err := s.IssueLogin(ctx, "uid 1 pid 2 via admin socket, outside sandboxes", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Login(ctx, link.Secret, "127.0.0.1:1234")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Login(ctx, link.Secret, "127.0.0.1:1234"); !errors.Is(err, ErrInvalid) {
		t.Errorf("second use of a link: %v, want ErrInvalid", err)
	}
	if _, err := s.Token(ctx, tok.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, sess.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, tok.Secret); !errors.Is(err, ErrInvalid) {
		t.Errorf("a token as a session: %v", err)
	}

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.QueryContext(ctx, `SELECT id, kind, hash, name, scopes, parent, issued_by, remote, created, expires, coalesce(used, ''), coalesce(revoked, '') FROM credentials`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var all strings.Builder
	n := 0
	for rows.Next() {
		cols := make([]string, 12)
		ptrs := make([]any, len(cols))
		for i := range cols {
			ptrs[i] = &cols[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		all.WriteString(strings.Join(cols, "|") + "\n")
		n++
	}
	if n != 3 {
		t.Fatalf("%d credential rows, want 3", n)
	}
	for _, secret := range []string{tok.Secret, link.Secret, sess.Secret} {
		if strings.Contains(all.String(), secret) || strings.Contains(all.String(), secret[4:]) {
			t.Errorf("a secret is stored in clear:\n%s", all.String())
		}
		if !strings.Contains(all.String(), Hash(secret)) {
			t.Errorf("the hash of a secret is not stored")
		}
	}
	if !strings.Contains(Describe(sess.Credential), "issued to uid 1 pid 2 via admin socket, outside sandboxes") {
		t.Errorf("describe session: %s", Describe(sess.Credential))
	}
}
