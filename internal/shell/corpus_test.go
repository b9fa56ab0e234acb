package shell

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

var update = flag.Bool("update", false, "rewrite golden files and corpus expectations from the current analysis")

// corpusCase is one line of testdata/corpus/*.jsonl.
type corpusCase struct {
	Cmd     string   `json:"cmd"`
	Verdict Verdict  `json:"verdict"`
	Classes []string `json:"classes"`
	Note    string   `json:"note,omitempty"`
	// Cwd, Home, Env and Profile are the analysis options of the case
	// (the owner's terminal state, analysis.profile).
	Cwd     string            `json:"cwd,omitempty"`
	Home    string            `json:"home,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Profile string            `json:"profile,omitempty"`
}

// options are the analysis options of a case.
func (c corpusCase) options() Options {
	return Options{Cwd: c.Cwd, Home: c.Home, Env: c.Env, Profile: c.Profile}
}

func loadCorpus(t testing.TB) map[string][]corpusCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no corpus files under testdata/corpus")
	}
	out := map[string][]corpusCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var c corpusCase
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			out[f] = append(out[f], c)
		}
	}
	return out
}

// TestCorpus checks every case's verdict and exact class set.
func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	total, safe := 0, 0
	positive := map[string]int{}
	for file, cases := range corpus {
		changed := false
		for i, c := range cases {
			total++
			if c.Verdict == Safe {
				safe++
			}
			for _, k := range c.Classes {
				positive[k]++
				if _, ok := Lookup(k); !ok {
					t.Errorf("%s: %q names unknown class %q", file, c.Cmd, k)
				}
			}
			a := c.options().Analyze(c.Cmd)
			got := a.Classes()
			slices.Sort(got)
			want := slices.Clone(c.Classes)
			slices.Sort(want)
			if a.Verdict == c.Verdict && slices.Equal(got, want) {
				continue
			}
			if *update {
				cases[i].Verdict, cases[i].Classes = a.Verdict, got
				changed = true
				continue
			}
			t.Errorf("%s: %q\n  got  %s %v (%s)\n  want %s %v", filepath.Base(file), c.Cmd, a.Verdict, got, a.Error, c.Verdict, want)
		}
		if changed {
			writeCorpus(t, file, cases)
		}
	}
	if total < 600 || safe < 150 {
		t.Errorf("corpus has %d cases (%d safe); want at least 600 (150 safe)", total, safe)
	}
	for _, cl := range Catalogue() {
		if positive[cl.Key] == 0 {
			t.Errorf("class %s has no positive corpus case", cl.Key)
		}
	}
}

// TestWeaknessFamilies: each of the weaknesses the analyser was built to
// close (issue 13, families 1 to 8: raw bytes, options, wrappers, code
// channels, inline code, what cannot be named, paths, missing classes)
// has a file of at least 40 cases, positives and look-alike negatives.
func TestWeaknessFamilies(t *testing.T) {
	corpus := loadCorpus(t)
	for i := 1; i <= 10; i++ {
		files, _ := filepath.Glob(fmt.Sprintf("testdata/corpus/w%02d-*.jsonl", i))
		if len(files) != 1 {
			t.Fatalf("family %d: %d files", i, len(files))
		}
		n := len(corpus[files[0]])
		if i <= 8 && n < 40 {
			t.Errorf("%s: %d cases, want at least 40", files[0], n)
		}
	}
}

// runCorpus checks the cases of the named corpus files (a family's own
// test, beside its rules).
func runCorpus(t *testing.T, names ...string) {
	t.Helper()
	corpus := loadCorpus(t)
	for _, name := range names {
		file := filepath.Join("testdata", "corpus", name+".jsonl")
		cases, ok := corpus[file]
		if !ok {
			t.Fatalf("no corpus file %s", file)
		}
		for _, c := range cases {
			a := c.options().Analyze(c.Cmd)
			got := a.Classes()
			slices.Sort(got)
			want := slices.Clone(c.Classes)
			slices.Sort(want)
			if a.Verdict != c.Verdict || !slices.Equal(got, want) {
				t.Errorf("%s: %q\n  got  %s %v (%s)\n  want %s %v", name, c.Cmd, a.Verdict, got, a.Error, c.Verdict, want)
			}
		}
	}
}

func writeCorpus(t *testing.T, file string, cases []corpusCase) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if c.Classes == nil {
			c.Classes = []string{}
		}
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, asciiJSON(b.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGolden compares the full analysis (candidates, via, spans) of each
// testdata/golden/*.sh with its .golden file.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.sh")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(Analyze(string(src)), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(f, ".sh") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("analysis of %s differs from %s:\n%s", f, golden, got)
			}
		})
	}
}

// asciiJSON escapes every non-ASCII character of JSON text, so invisible
// and look-alike characters stay visible in the corpus files.
func asciiJSON(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case r < 0x7f:
			out.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}
