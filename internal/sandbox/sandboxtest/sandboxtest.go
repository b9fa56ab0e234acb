// Package sandboxtest gives tests a real sandbox: the same helper, the
// same namespaces, on a temporary directory. Under WARDEN_FULL=1 a
// kernel that cannot sandbox fails the test; otherwise it is skipped.
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/sandbox"
)

// New returns a workspace-write sandbox whose temporary root lives in a
// fresh hidden directory, with the network on and hide added to the
// hidden paths.
func New(t testing.TB, hide ...string) *sandbox.Sandbox {
	t.Helper()
	return NewConfig(t, sandbox.Config{Network: true, Hide: hide})
}

// NewConfig returns a sandbox for cfg; an empty TempRoot gets a fresh
// directory (hidden), an empty Spawner "test".
func NewConfig(t testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	if cfg.TempRoot == "" {
		cfg.TempRoot = filepath.Join(t.TempDir(), "sandbox")
	}
	if cfg.Spawner == "" {
		cfg.Spawner = "test"
	}
	s, err := sandbox.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	if err := s.Err(); err != nil {
		st := s.Status()
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatalf("WARDEN_FULL=1 but the kernel cannot sandbox: %s (%s)", st.Why, st.Fix)
		}
		t.Skipf("the kernel cannot sandbox: %s; set WARDEN_FULL=1 to make this a failure", st.Why)
	}
	return s
}
