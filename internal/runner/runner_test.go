package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// newRunner is a runner on a real store and gate, no broker (asks deny).
func newRunner(t *testing.T, yaml string) (*runner.Runner, *sqlite.DB) {
	t.Helper()
	f := runnertest.New(t, runnertest.Options{Policy: yaml})
	return f.Runner, f.DB
}

func cronCtx(t *testing.T) context.Context { return runnertest.Cron(t, "j", "r") }

func TestCodeIsDecidedAndAudited(t *testing.T) {
	for _, mode := range []string{"deny", "approve"} {
		r, db := newRunner(t, "approvals:\n  cron_mode: "+mode+"\n")
		dir := t.TempDir()
		var out bytes.Buffer
		o, code, err := r.Code(cronCtx(t), "sh", "touch made; rm -rf ./gone", dir, &out, &out)
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
	if o, err := r.WriteFile(cronCtx(t), files, "notes.txt", []byte("x")); err != nil || !o.Allowed {
		t.Fatalf("ordinary write: %v %+v", err, o)
	}
	if o, _ := r.WriteFile(cronCtx(t), files, ".env", []byte("TOKEN=x")); o.Allowed || o.Decision.Rule != gate.RuleProtectedPath {
		t.Fatalf(".env write: %+v", o.Decision)
	}
	if _, err := os.Stat(filepath.Join(root, ".env")); err == nil {
		t.Fatal("a denied write happened")
	}
}

// TestWriteFileThroughSymlink: the write tool judges a name on where it
// leads. With cron_mode approve (so nothing but a floor stops a write),
// writes through links to ~/.bashrc, into ~/.ssh and into warden's
// config directory are denied and the files are unchanged — also when
// the tool's root is the home directory itself, where os.Root alone
// would let the link through. An allowed write to a link replaces the
// link and never writes through it.
func TestWriteFileThroughSymlink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	for _, d := range []string{home + "/.ssh", home + "/.config/warden", home + "/proj"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	orig := map[string]string{home + "/.bashrc": "rc", home + "/.ssh/authorized_keys": "key", home + "/.config/warden/config.yaml": "cfg", home + "/plain.txt": "plain"}
	for f, c := range orig {
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		home + "/proj/notes.txt": "../.bashrc",
		home + "/proj/keys":      home + "/.ssh",
		home + "/proj/cfg":       "../.config/warden",
		home + "/proj/alias.txt": "../plain.txt",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	r := runnertest.New(t, runnertest.Options{Policy: "approvals:\n  cron_mode: approve\n",
		Paths: gate.Paths{Home: home, Protected: []string{home + "/.config/warden"}}}).Runner
	for _, fsRoot := range []string{home + "/proj", home} {
		files := tools.Files{Root: fsRoot}
		for _, name := range []string{home + "/proj/notes.txt", home + "/proj/keys/authorized_keys", home + "/proj/keys/new", home + "/proj/cfg/config.yaml"} {
			o, _ := r.WriteFile(cronCtx(t), files, name, []byte("pwned"))
			if o.Allowed {
				t.Errorf("root %s: write %s allowed: %+v", fsRoot, name, o.Decision)
			}
		}
	}
	for f, c := range orig {
		if b, err := os.ReadFile(f); err != nil || string(b) != c {
			t.Errorf("%s changed: %q %v", f, b, err)
		}
	}
	if _, err := os.Lstat(home + "/.ssh/new"); err == nil {
		t.Error("a file was created in ~/.ssh")
	}
	// An ordinary link target is allowed; the tool replaces the link.
	o, err := r.WriteFile(cronCtx(t), tools.Files{Root: home}, home+"/proj/alias.txt", []byte("new"))
	if err != nil || !o.Allowed {
		t.Fatalf("ordinary write: %v %+v", err, o.Decision)
	}
	if b, _ := os.ReadFile(home + "/plain.txt"); string(b) != "plain" {
		t.Errorf("the write went through the link: %q", b)
	}
	if fi, err := os.Lstat(home + "/proj/alias.txt"); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("alias.txt should now be a regular file: %v %v", fi, err)
	}
}
