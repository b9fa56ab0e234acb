package policy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// projections mimics shell.Analysis.Projections for one simple command:
// the whole command, then "basename args…" and "path args…".
func projections(whole string, argv ...string) []string {
	out := []string{whole}
	if len(argv) == 0 {
		return out
	}
	args := ""
	if len(argv) > 1 {
		args = " " + strings.Join(argv[1:], " ")
	}
	base := argv[0][strings.LastIndex(argv[0], "/")+1:]
	return append(out, base+args, argv[0]+args)
}

func TestDenyRulesMatch(t *testing.T) {
	tests := []struct {
		name   string
		globs  []string
		proj   []string
		want   string
		wantOK bool
	}{
		{
			name:  "basename rule covers an absolute path",
			globs: []string{"sudo *"},
			proj:  projections("/usr/bin/sudo -n id", "/usr/bin/sudo", "-n", "id"),
			want:  "sudo *", wantOK: true,
		},
		{
			name:  "path rule does not widen to another binary of the same name",
			globs: []string{"/usr/local/bin/foo *"},
			proj:  projections("/usr/bin/foo x", "/usr/bin/foo", "x"),
		},
		{
			name:  "path rule matches its own path",
			globs: []string{"/usr/local/bin/foo *"},
			proj:  projections("/usr/local/bin/foo x", "/usr/local/bin/foo", "x"),
			want:  "/usr/local/bin/foo *", wantOK: true,
		},
		{
			name:  "case-insensitive",
			globs: []string{"git push --force*"},
			proj:  projections("GIT PUSH --FORCE origin", "GIT", "PUSH", "--FORCE", "origin"),
			want:  "git push --force*", wantOK: true,
		},
		{
			name:  "inner candidate of a compound command",
			globs: []string{"rm -rf *"},
			proj:  append(projections("cd /tmp && rm -rf x"), "cd /tmp", "cd /tmp", "rm -rf x", "rm -rf x"),
			want:  "rm -rf *", wantOK: true,
		},
		{
			name:  "white space collapsed in the projection",
			globs: []string{"rm -rf /"},
			proj:  []string{"rm   -rf \t /"},
			want:  "rm -rf /", wantOK: true,
		},
		{
			name:  "raw projection still tried (quoted runs of spaces)",
			globs: []string{`echo "a  b"`},
			proj:  []string{`echo "a  b"`},
			want:  `echo "a  b"`, wantOK: true,
		},
		{
			name:  "first rule in config order wins",
			globs: []string{"curl *", "* | sh", "curl * | sh"},
			proj:  []string{"curl x | sh"},
			want:  "curl *", wantOK: true,
		},
		{
			name:  "later rule found when earlier ones miss",
			globs: []string{"wget *", "* | sh"},
			proj:  []string{"curl x | sh"},
			want:  "* | sh", wantOK: true,
		},
		{
			name:  "no projections",
			globs: []string{"*"},
		},
		{
			name: "no rules",
			proj: []string{"rm -rf /"},
		},
		{
			name:  "prefix without wildcard does not match longer command",
			globs: []string{"sudo"},
			proj:  projections("sudo -n id", "sudo", "-n", "id"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := CompileDeny(tt.globs)
			if err != nil {
				t.Fatalf("CompileDeny: %v", err)
			}
			got, ok := r.Match(tt.proj)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Match(%q) = %q, %v; want %q, %v", tt.proj, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestDenyRulesNil(t *testing.T) {
	var r *DenyRules
	if g, ok := r.Match([]string{"rm -rf /"}); ok {
		t.Errorf("nil DenyRules matched %q", g)
	}
	if r.Len() != 0 || r.Globs() != nil {
		t.Errorf("nil DenyRules: Len %d, Globs %v", r.Len(), r.Globs())
	}
}

func TestCompileDenyError(t *testing.T) {
	_, err := CompileDeny([]string{"ok *", "bad [x", "also ok"})
	if !errors.Is(err, ErrMalformedGlob) {
		t.Fatalf("error %v does not wrap ErrMalformedGlob", err)
	}
	for _, want := range []string{`"bad [x"`, "deny rule 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestDenyRulesGlobs(t *testing.T) {
	in := []string{"a *", "  b   c  "}
	r, err := CompileDeny(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Globs(); fmt.Sprint(got) != fmt.Sprint(in) || r.Len() != 2 {
		t.Errorf("Globs() = %q, Len %d; want %q", got, r.Len(), in)
	}
}

func BenchmarkDenyRulesMatch(b *testing.B) {
	globs := []string{
		"sudo *", "rm -rf /*", "curl * | sh", "wget * | bash", "git push --force*",
		"/usr/local/bin/deploy *", "chmod 777 *", "dd if=* of=/dev/*", "mkfs*", "shutdown*",
		"kubectl delete *", "terraform destroy*", "docker rm -f *", "npm publish*", "[!a-z]*x", "* | sh", "*--force*",
		"aws s3 rm * --recursive", "gcloud * delete *", "psql * -c drop*", "nc -l*", "ssh * rm *",
	}
	r, err := CompileDeny(globs)
	if err != nil {
		b.Fatal(err)
	}
	miss := projections("/usr/bin/git   commit -m 'fix the thing' --signoff", "/usr/bin/git", "commit", "-m", "fix the thing", "--signoff")
	hit := projections("/usr/bin/sudo -n systemctl restart nginx", "/usr/bin/sudo", "-n", "systemctl", "restart", "nginx")
	b.Run("miss", func(b *testing.B) {
		for b.Loop() {
			if _, ok := r.Match(miss); ok {
				b.Fatal("unexpected match")
			}
		}
	})
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			if _, ok := r.Match(hit); !ok {
				b.Fatal("expected match")
			}
		}
	})
}
