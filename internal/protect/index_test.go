package protect

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// indexTables are tables whose own paths exercise the index: plain,
// upper case, pattern characters, a name with an invalid byte and one
// holding U+FFFD (which the index must not treat as a plain name), the
// root.
func indexTables() []*Table {
	return []*Table{
		testTable(),
		New(Paths{StateDir: "/Srv/W[1]/St*te", ConfigDir: "/home/u/conf\xff/warden", Extra: []string{"/opt/\uFFFD/x", "/q\\/r", "relative/ignored"}}),
		New(Paths{StateDir: "/"}),
	}
}

// sameMatches runs every query of the table on p through the index and
// through the linear scan and fails on the first difference.
func sameMatches(t testing.TB, tab *Table, p string) {
	t.Helper()
	sameMatchesAcc(t, tab, p, []Access{Read, Write, ReadWrite}, []bool{false, true})
}

func sameMatchesAcc(t testing.TB, tab *Table, p string, accs []Access, dotglobs []bool) {
	t.Helper()
	lin := Linear(tab)
	for _, acc := range accs {
		if a, b := tab.Match(p, acc), lin.Match(p, acc); a != b {
			t.Fatalf("Match(%q, %s): index %+v, linear %+v", p, acc, a, b)
		}
		if a, b := tab.MatchTree(p, acc), lin.MatchTree(p, acc); a != b {
			t.Fatalf("MatchTree(%q, %s): index %+v, linear %+v", p, acc, a, b)
		}
		for _, dot := range dotglobs {
			if a, b := tab.MatchGlob(p, acc, dot), lin.MatchGlob(p, acc, dot); a != b {
				t.Fatalf("MatchGlob(%q, %s, %v): index %+v, linear %+v", p, acc, dot, a, b)
			}
		}
	}
}

// indexPaths are paths built from the table's own patterns (each
// wildcard and "**" filled in several ways, at the root, under a home,
// relative, climbing out, in upper case, with a trailing slash or a
// name below), so that most entries are matched by some path.
func indexPaths(tab *Table) []string {
	var out []string
	for _, e := range tab.entries {
		for _, p := range append([]string{e.Pattern}, e.Except...) {
			for _, fill := range []struct{ deep, star string }{{"", "x"}, {"a/b", ""}, {"a", "id_rsa.pub"}} {
				c := strings.ReplaceAll(p, "**", fill.deep)
				c = strings.ReplaceAll(c, "*", fill.star)
				c = strings.ReplaceAll(c, "?", "q")
				c = strings.NewReplacer("[a-z]", "b", "[", "", "]", "").Replace(c)
				out = append(out, c, "/"+c, "/home/u/"+c, "../../"+c, strings.ToUpper(c), c+"/", c+"/sub/x", "./"+c+"/..")
			}
		}
	}
	return out
}

// corpusPaths are the words of the shell analyser's corpus lines (the
// commands agents send, many adversarial), as relative and absolute
// paths and as a name under a home.
func corpusPaths(t testing.TB) []string {
	files, err := filepath.Glob("../shell/testdata/corpus/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shell corpus: %v", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			var c struct {
				Cmd string `json:"cmd"`
			}
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				continue
			}
			for _, w := range strings.FieldsFunc(c.Cmd, func(r rune) bool { return strings.ContainsRune(" \t\n;|&<>()'\"`=,", r) }) {
				if seen[w] {
					continue
				}
				seen[w] = true
				out = append(out, w)
				if !strings.HasPrefix(w, "/") {
					out = append(out, "/home/u/"+strings.TrimPrefix(w, "~/"))
				}
			}
		}
		fh.Close()
	}
	return out
}

// TestIndexMatchesLinearScan: the index picks, for every path, the same
// entry the linear scan of the whole table picks — over paths built from
// every pattern of the table and every word of the shell corpus, for
// Match, MatchGlob (with and without dotglob) and MatchTree.
func TestIndexMatchesLinearScan(t *testing.T) {
	tabs := indexTables()
	n := 0
	for i, tab := range tabs {
		paths := append(indexPaths(tab), "~", "~bob", "~/", "~root/x", "/", ".", "..")
		if i == 0 {
			paths = append(paths, corpusPaths(t)...)
		}
		for k, p := range paths {
			if (testing.Short() || i == 2) && k%8 != 0 && k < len(paths)-7 {
				continue
			}
			// The index does not depend on the access or on dotglob
			// (a glob with pattern characters tries every entry);
			// FuzzIndex varies both.
			sameMatchesAcc(t, tab, p, []Access{Read, Write}, []bool{false})
			n++
		}
	}
	t.Logf("%d paths, %d tables", n, len(tabs))
}

// FuzzIndex compares the index with the linear scan on arbitrary paths
// and globs.
func FuzzIndex(f *testing.F) {
	for _, p := range indexPaths(testTable())[:200] {
		f.Add(p)
	}
	for _, p := range []string{"/home/u/.ssh/../.ssh/id_rsa", "~/.aws/credentials", ".env.local", "/dev/sda1", "/", "..", "a\\", "x/.ss?/id*", "/etc/**/passwd", "\xff/.ssh/x", "~", "~bob", "~/", "~/.ssh"} {
		f.Add(p)
	}
	tabs := indexTables()
	f.Fuzz(func(t *testing.T, p string) {
		for _, tab := range tabs {
			sameMatches(t, tab, p)
		}
		// MatchGlob's names of a literal glob, as first written.
		g := strings.ToLower(p)
		abs := strings.HasPrefix(g, "/")
		if !abs {
			g, _ = relTail(g)
		}
		if !hasMeta(g) {
			if got, want := splitPath(literalPath(g, abs)), splitPath(path.Clean("/"+unescapeGlob(g))); !slices.Equal(got, want) {
				t.Fatalf("literalPath(%q): names %q, want %q", g, got, want)
			}
		}
	})
}
