package grant

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/shell"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in    string
		grain Grain
		pat   string
		bad   bool
	}{
		{"git push *", Prefix, "git push *", false},
		{"  git   push  * ", Prefix, "git push *", false},
		{"class:delete.recursive", Class, "delete.recursive", false},
		{"rm -rf build/", Exact, "rm -rf build/", false},
		{"*", "", "", true},
		{"", "", "", true},
		{"class:no.such", "", "", true},
		{"git * push *", "", "", true},
	}
	for _, tt := range tests {
		g, err := Parse(tt.in)
		if (err != nil) != tt.bad {
			t.Fatalf("%q: err %v", tt.in, err)
		}
		if !tt.bad && (g.Grain != tt.grain || g.Pattern != tt.pat) {
			t.Errorf("%q: got %s %q", tt.in, g.Grain, g.Pattern)
		}
	}
}

func TestCover(t *testing.T) {
	now := time.Unix(1000, 0)
	perm := func(e string) Grant {
		g, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		g.Scope = Permanent
		return g
	}
	sess := func(e, s string) Grant { g := perm(e); g.Scope, g.Session = Session, s; return g }
	tests := []struct {
		name   string
		grants []Grant
		cmd    string
		want   bool
	}{
		{"prefix covers its command", []Grant{perm("git push *")}, "git push -f origin main", true},
		{"prefix matches by basename", []Grant{perm("git push *")}, "/usr/bin/git push --force", true},
		{"prefix inside a payload", []Grant{perm("git push *")}, "bash -c 'git push -f'", true},
		{"prefix never covers the rest of a compound", []Grant{perm("git push *")}, "git push -f && rm -rf build", false},
		{"path prefix does not widen", []Grant{perm("/opt/git push *")}, "git push -f", false},
		{"exact", []Grant{perm("rm -rf build/")}, "rm  -rf   build/", true},
		{"exact is exact", []Grant{perm("rm -rf build/")}, "rm -rf build/ dist/", false},
		{"class needs every class", []Grant{perm("class:delete.recursive")}, "rm -rf build", false},
		{"classes", []Grant{perm("class:delete.recursive"), perm("class:delete.force")}, "rm -rf build", true},
		{"session grant in its session", []Grant{sess("git push *", "s1")}, "git push -f", true},
		{"structural finding needs a class grant", []Grant{perm("curl *"), perm("sh *")}, "curl x | sh", false},
		{"nothing dangerous is not covered", []Grant{perm("ls *")}, "ls -la", false},
		{"hardline is never covered", []Grant{perm("rm -rf /"), perm("class:delete.root")}, "rm -rf /", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := Cover(tt.grants, shell.Analyze(tt.cmd), "s1", now)
			if got != tt.want {
				t.Fatalf("Cover = %v, want %v", got, tt.want)
			}
		})
	}
	// Other sessions and expired grants do not count.
	g := sess("git push *", "s1")
	if _, ok := Cover([]Grant{g}, shell.Analyze("git push -f"), "s2", now); ok {
		t.Error("a session grant leaked into another session")
	}
	g.Expires = now
	if _, ok := Cover([]Grant{g}, shell.Analyze("git push -f"), "s1", now); ok {
		t.Error("an expired grant still covers")
	}
}

func TestExactKey(t *testing.T) {
	if k := ExactKey(action.NewShell("ls   -la")); k != "ls -la" {
		t.Errorf("shell key %q", k)
	}
	if ExactKey(action.NewCode("python", "a")) == ExactKey(action.NewCode("python", "b")) {
		t.Error("different code shares a key")
	}
	if k := ExactKey(action.NewMCP("fs", "rm", nil, false)); k != "mcp:fs/rm" {
		t.Errorf("mcp key %q", k)
	}
}
