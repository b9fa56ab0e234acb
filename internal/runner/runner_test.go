package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// newRunner is a runner on a real store and gate, no broker (asks deny).
func newRunner(t *testing.T, yaml string) (*Runner, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg, _, err := config.Parse([]byte(yaml), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.Compile(cfg, gate.Paths{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{Policy: p, Grants: db, Sessions: db})
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Gate: g, Audit: db, Terminal: tools.Terminal{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Sandbox: sandboxtest.New(t)}}), db
}

func cronCtx(t *testing.T) context.Context {
	o, err := owner.Cron("j", "r")
	if err != nil {
		t.Fatal(err)
	}
	return owner.With(context.Background(), o)
}

func TestCodeIsDecidedAndAudited(t *testing.T) {
	for _, mode := range []string{"deny", "approve"} {
		r, db := newRunner(t, "approvals:\n  cron_mode: "+mode+"\n")
		dir := t.TempDir()
		var out bytes.Buffer
		o, code, err := r.Code(cronCtx(t), "sh", "touch made; rm -rf ./gone", dir, &out, &out, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(filepath.Join(dir, "made"))
		if (mode == "approve") != o.Allowed || (statErr == nil) != o.Allowed || (o.Allowed && code != 0) {
			t.Fatalf("cron_mode %s: allowed %v, file %v, code %d", mode, o.Allowed, statErr, code)
		}
		recs, err := db.Decisions(context.Background(), store.AuditFilter{})
		if err != nil || len(recs) != 1 || recs[0].Kind != "code" {
			t.Fatalf("audit: %v %+v", err, recs)
		}
	}
}

func TestWriteFileIsDecided(t *testing.T) {
	r, _ := newRunner(t, "approvals:\n  cron_mode: approve\n")
	root := t.TempDir()
	files := tools.Files{Root: root}
	if o, err := r.WriteFile(cronCtx(t), files, "notes.txt", []byte("x"), nil); err != nil || !o.Allowed {
		t.Fatalf("ordinary write: %v %+v", err, o)
	}
	if o, _ := r.WriteFile(cronCtx(t), files, ".env", []byte("TOKEN=x"), nil); o.Allowed || o.Decision.Rule != gate.RuleProtectedPath {
		t.Fatalf(".env write: %+v", o.Decision)
	}
	if _, err := os.Stat(filepath.Join(root, ".env")); err == nil {
		t.Fatal("a denied write happened")
	}
}
