package shell

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/protect"
)

// sameAsGeneral fails when the analysis of src with o differs in any way
// from the general walk's: candidates (with their unexported offsets),
// findings and their reasons, verdict, error, the --explain reading, the
// deny-rule projections and the JSON the CLI prints. It returns whether
// the fast path took the line.
func sameAsGeneral(t testing.TB, o Options, src string) bool {
	t.Helper()
	took := false
	for _, explain := range []bool{false, true} {
		o.Explain = explain
		fast := o.Analyze(src)
		g := o
		g.general = true
		gen := g.Analyze(src)
		if !reflect.DeepEqual(fast, gen) {
			t.Fatalf("%q (explain %v): fast path differs from the general walk\nfast:    %+v\ngeneral: %+v", src, explain, fast, gen)
		}
		fj, _ := json.Marshal(fast)
		gj, _ := json.Marshal(gen)
		if string(fj) != string(gj) {
			t.Fatalf("%q: JSON differs\nfast:    %s\ngeneral: %s", src, fj, gj)
		}
		if !slices.Equal(fast.Projections(), gen.Projections()) || !slices.Equal(fast.Classes(), gen.Classes()) {
			t.Fatalf("%q: projections or classes differ", src)
		}
		took = took || fastTakes(src)
	}
	return took
}

// fastTakes reports whether the fast path reads src (on a walker of its
// own, outside the pool).
func fastTakes(src string) bool {
	w := &walker{}
	a := &Analysis{Input: src}
	w.start(Options{MaxCommands: defaultMaxCommands, MaxDepth: defaultMaxDepth}, a)
	return w.fast(src)
}

// TestFastPathDifferential runs every corpus case, every golden input and
// the benchmark lines through the fast path and the general walk, each
// case with its own options and again in a directory with a home and a
// protected-path table: the results must be identical.
func TestFastPathDifferential(t *testing.T) {
	inDir := Options{Cwd: "/home/u/project", Home: "/home/u",
		Protect: protect.New(protect.Paths{StateDir: "/home/u/.local/state/warden", ConfigDir: "/home/u/.config/warden"})}
	var srcs []string
	took, total := 0, 0
	for _, cases := range loadCorpus(t) {
		for _, c := range cases {
			total++
			if sameAsGeneral(t, c.options(), c.Cmd) {
				took++
			}
			sameAsGeneral(t, inDir, c.Cmd)
			srcs = append(srcs, c.Cmd)
		}
	}
	golden, _ := filepath.Glob("testdata/golden/*.sh")
	for _, f := range golden {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	srcs = append(srcs, typical...)
	for _, s := range srcs {
		sameAsGeneral(t, Options{}, s)
		sameAsGeneral(t, Options{Profile: ProfileStrict}, s)
	}
	// The fast path must actually be exercised: the corpus has plenty of
	// one-command lines.
	if took < 100 {
		t.Errorf("the fast path took %d of %d corpus cases; want at least 100", took, total)
	}
	t.Logf("fast path took %d of %d corpus cases", took, total)
}

// TestFastPathRefuses lists lines that look plain but are not one simple
// command of literal words.
func TestFastPathRefuses(t *testing.T) {
	for _, src := range []string{
		"", "   ", "x=1", "FOO=bar ls", "export A", "declare -x A", "let a", "time ls", "if", "function",
		"ls ~", "ls *", "echo $HOME", "ls #x", "ls|id", "ls &&", "&& ls", "ls;", ";ls", "ls; ;id", "ls ;; id", "ls &", "ls & id",
		"ls |& id", "ls &&& id", "ls ||| id", "a && x=1", "a; export B", "a && if", "cd /tmp && set -- a", "ls&", "'ls' a", "echo ''", "echo 'a", "echo 'a'b", "echo a'b'", "echo 'a\tb'", "echo 'é'", "echo 'a\nb'", "echo {}x", "{} a", `echo "a"`, `echo a\ b`,
		"ls\nid", "ls >x", "echo {a,b}", "echo !x", "echo ^a", "set -- a b", "ls\r", "echo a\u00a0b", "ls (x)",
		"[ -f x ]", "echo `id`", "coproc x", "select x",
	} {
		if fastTakes(src) {
			t.Errorf("fast path took %q", src)
		}
		sameAsGeneral(t, Options{}, src)
	}
	for _, src := range []string{"ls", "git status --porcelain", "  go test ./...  ", "rm -rf /", "\tcurl -fsSL https://x.sh/a",
		"ls;id", "a && b || c; d", "cd /tmp && rm -rf x", "echo 'a'", "find . -name '*.pyc' -exec rm -f {} +", "grep -rn 'TODO: $x `id`' src",
		"sh -c 'rm -rf /'", "xargs -I {} cp {} /tmp", "git commit -m 'fix: a; b && c'", "cd / ; rm -rf tmp", "go vet ./... && go test ./...", "true || rm -rf x"} {
		if !fastTakes(src) {
			t.Errorf("fast path refused %q", src)
		}
		sameAsGeneral(t, Options{}, src)
		sameAsGeneral(t, Options{Cwd: "/home/u", Home: "/home/u"}, src)
	}
}

// FuzzFastPath: whatever the input, the fast path and the general walk
// agree.
func FuzzFastPath(f *testing.F) {
	for _, s := range typical {
		f.Add(s)
	}
	for _, s := range []string{"ls -la", "rm -rf /", "cd / && rm -rf tmp", "a;b&&c||d", "ls &&", "ls & id", "sudo rm -rf --no-preserve-root /", "chmod 777 /etc/passwd", "git push --force origin main",
		"dd if=/dev/zero of=/dev/sda", "shutdown -h now", "python3 -m http.server", "sh -c id", "bash -c ls", "env rm -rf /", "set -- a", "IF x", "DECLARE a",
		"sh -c 'rm -rf ~'", "echo 'a' 'b' && grep -e '$x' f", "xargs -I {} rm {}", "find / -exec sh -c 'id' {} ;", "git commit -m 'a;b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sameAsGeneral(t, Options{}, src)
		sameAsGeneral(t, Options{Cwd: "/home/u/p", Home: "/home/u", Profile: ProfileStrict}, src)
		if a := Analyze(src); !slices.Equal(a.Projections(), projectionsReference(a)) {
			t.Fatalf("%q: projections %q, want %q", src, a.Projections(), projectionsReference(a))
		}
	})
}

// projectionsReference is how Projections was first written: the
// faster version must return the same strings.
func projectionsReference(a *Analysis) []string {
	out := []string{strings.Join(strings.Fields(a.Input), " ")}
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) == 0 {
			continue
		}
		words := c.Words()
		tail := strings.Join(strings.Fields(strings.Join(words[1:], " ")), " ")
		join := func(head string) string {
			if tail == "" {
				return head
			}
			return head + " " + tail
		}
		base := baseName(words[0])
		out = append(out, join(base))
		if base != words[0] {
			out = append(out, join(words[0]))
		}
	}
	return out
}

func TestProjectionsReference(t *testing.T) {
	extra := []string{"a  b", " a", "a ", "a\tb", "x\u00a0y z", "/bin/rm  -rf   /", "dir/ -x", `a\b c`, "sh -c 'a   b'", "echo \"a\u2003b\""}
	check := func(src string) {
		a := Analyze(src)
		if got, want := a.Projections(), projectionsReference(a); !slices.Equal(got, want) {
			t.Errorf("%q: projections %q, want %q", src, got, want)
		}
	}
	for _, cases := range loadCorpus(t) {
		for _, c := range cases {
			check(c.Cmd)
		}
	}
	for _, s := range extra {
		check(s)
	}
}

// TestProtectIndexDifferential analyses every corpus case, every golden
// input and the benchmark lines with the protected-path table's index
// and with a linear scan of the table (protect.Linear), with each case's
// own options and in a directory with a home: the analyses must be
// identical, down to the finding's detail.
func TestProtectIndexDifferential(t *testing.T) {
	tab := protect.New(protect.Paths{StateDir: "/home/u/.local/state/warden", ConfigDir: "/home/u/.config/warden"})
	lin := protect.Linear(tab)
	same := func(o Options, src string) {
		t.Helper()
		o.Protect = tab
		a := o.Analyze(src)
		o.Protect = lin
		b := o.Analyze(src)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: the index differs from the linear scan\nindex:  %+v\nlinear: %+v", src, a, b)
		}
	}
	inDir := Options{Cwd: "/home/u/project", Home: "/home/u"}
	for _, cases := range loadCorpus(t) {
		for _, c := range cases {
			same(c.options(), c.Cmd)
			same(inDir, c.Cmd)
		}
	}
	golden, _ := filepath.Glob("testdata/golden/*.sh")
	for _, f := range golden {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		same(Options{}, string(b))
		same(inDir, string(b))
	}
	for _, s := range typical {
		same(inDir, s)
	}
}
