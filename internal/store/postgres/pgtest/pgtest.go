// Package pgtest gives tests their own PostgreSQL schema on the server
// named by WARDEN_TEST_POSTGRES (a postgres:// URL; .ci/run starts a
// throwaway cluster and sets it). Without the variable the tests that
// need it skip, unless WARDEN_FULL=1, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable that holds the test server's URL.
const Env = "WARDEN_TEST_POSTGRES"

// Server returns the test server's URL, skipping (or, under
// WARDEN_FULL=1, failing) t without one.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatalf("WARDEN_FULL=1 but %s is not set: the PostgreSQL tests need a server (.ci/run starts one)", Env)
		}
		t.Skipf("%s not set: no PostgreSQL server to test against; set WARDEN_FULL=1 to make this a failure", Env)
	}
	return u
}

// Schema creates a new, empty schema on the test server, drops it when
// t ends, and returns a URL whose connections use it (search_path).
func Schema(t testing.TB) string {
	t.Helper()
	base := Server(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "wt_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", Env, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: connect to drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
