package reads_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/reads"
)

// TestCompileJudgesAsGate: the judge warden-hook compiles from a config
// judges every read as the gate's policy compiled from the same config
// and paths does — secrets, warden's own files (also through a link),
// deny rules, globs, relative paths and ~.
func TestCompileJudgesAsGate(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "st")
	if err := os.Symlink(state, link); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("approvals:\n  deny: ['read /srv/private/*', 'read *.sqlite']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*config.Config{nil, cfg} {
		p := reads.Paths{Home: home, Protected: []string{cfgPath, state}}
		r, err := reads.Compile(c, p)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gate.Compile(c, gate.Paths{Home: p.Home, Protected: p.Protected})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct {
			dir          string
			paths, globs []string
		}{
			{"/tmp", []string{"notes.txt"}, nil},
			{home, []string{".ssh/id_rsa"}, nil},
			{"/", []string{"~/.aws/credentials"}, nil},
			{"/", []string{filepath.Join(link, "warden.db")}, nil},
			{"/", []string{cfgPath}, nil},
			{"/", []string{"/srv/private/a"}, nil},
			{"/work", []string{"db.sqlite"}, nil},
			{"/", nil, []string{"~/.ssh/*"}},
			{home, nil, []string{"**/*.pem"}},
			{"/", []string{"/etc/shadow", "/etc/hosts"}, nil},
			{"", []string{"../../etc/shadow"}, nil},
		} {
			got, want := r.Judge(q.dir, q.paths, q.globs), g.JudgeRead(q.dir, q.paths, q.globs)
			if got != want {
				t.Errorf("config %v, %s %v %v: reads judged %+v, the gate %+v", c != nil, q.dir, q.paths, q.globs, got, want)
			}
		}
	}
	// Not vacuous: a key is a secret, and a deny rule denies.
	r, _ := reads.Compile(cfg, reads.Paths{Home: home})
	if j := r.Judge(home, []string{".ssh/id_rsa"}, nil); !j.Match.Protected() {
		t.Errorf("~/.ssh/id_rsa: %+v", j)
	}
	if j := r.Judge("/", []string{"/srv/private/a"}, nil); j.DenyRule == "" {
		t.Errorf("deny rule: %+v", j)
	}
}
