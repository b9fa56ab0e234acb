package codescan

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type tcase struct {
	lang, verdict, src string
	cmds               []string // nil: no check ("*")
	line               int
}

// readCases reads a testdata file: "[lang |] verdict | source | commands"
// with the source Go-quoted and commands joined by " ;; " ("-" none,
// "*" unchecked).
func readCases(t *testing.T, file, lang string) []tcase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tcase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := tcase{lang: lang, line: n}
		rest := line
		if lang == "" {
			l, r, _ := strings.Cut(rest, " | ")
			c.lang, rest = strings.TrimSpace(l), r
		}
		verdict, rest, _ := strings.Cut(rest, " | ")
		c.verdict = strings.TrimSpace(verdict)
		rest = strings.TrimSpace(rest)
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			t.Fatalf("%s:%d: source: %v", file, n, err)
		}
		c.src, _ = strconv.Unquote(q)
		after, ok := strings.CutPrefix(strings.TrimSpace(rest[len(q):]), "|")
		if !ok {
			t.Fatalf("%s:%d: no commands field", file, n)
		}
		fields := []string{"", "", after}
		switch want := strings.TrimSpace(fields[2]); want {
		case "*":
		case "-":
			c.cmds = []string{}
		default:
			c.cmds = strings.Split(want, " ;; ")
		}
		out = append(out, c)
	}
	return out
}

func runCases(t *testing.T, file, lang string, min int) {
	cases := readCases(t, file, lang)
	if len(cases) < min {
		t.Errorf("%s: %d cases, want at least %d", file, len(cases), min)
	}
	for _, c := range cases {
		r := Analyze(c.lang, c.src)
		if got := map[bool]string{true: "complete", false: "incomplete"}[r.Complete]; got != c.verdict {
			t.Errorf("%s:%d %s %q: %s, want %s (reasons %q)", file, c.line, c.lang, c.src, got, c.verdict, r.Reasons)
		}
		if c.cmds == nil {
			continue
		}
		got := r.Commands
		if got == nil {
			got = []string{}
		}
		if strings.Join(got, " ;; ") != strings.Join(c.cmds, " ;; ") {
			t.Errorf("%s:%d %s %q: commands %q, want %q", file, c.line, c.lang, c.src, got, c.cmds)
		}
	}
}

func TestPython(t *testing.T) { runCases(t, "python.txt", Python, 40) }
func TestJS(t *testing.T)     { runCases(t, "js.txt", Node, 40) }
func TestOther(t *testing.T)  { runCases(t, "other.txt", "", 40) }

func TestLanguage(t *testing.T) {
	for in, want := range map[string]string{"python3": Python, "Python3.12": Python, "py": Python, "node": Node, "ts": Node,
		"deno": Node, "bun": Node, "perl5": Perl, "rb": Ruby, "php8": PHP, "pwsh": PowerShell, "bash": Shell, "sh": Shell, "zsh": Shell} {
		if got, ok := Language(in); !ok || got != want {
			t.Errorf("Language(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := Language("cobol"); ok {
		t.Error("unknown language accepted")
	}
	if r := Analyze("cobol", "DISPLAY 'X'"); r.Complete || len(r.Reasons) == 0 {
		t.Errorf("unknown language must be incomplete: %+v", r)
	}
	if r := Analyze("bash", "rm -rf /"); !r.Complete || len(r.Commands) != 1 || r.Commands[0] != "rm -rf /" {
		t.Errorf("shell is handed back whole: %+v", r)
	}
}

// An identifier the vocabulary does not know, anywhere, makes the code
// incomplete, whatever surrounds it.
func FuzzAnalyze(f *testing.F) {
	for _, file := range []string{"python.txt", "js.txt"} {
		data, _ := os.ReadFile(filepath.Join("testdata", file))
		for _, line := range strings.Split(string(data), "\n") {
			if _, rest, ok := strings.Cut(line, " | "); ok {
				if q, err := strconv.QuotedPrefix(strings.TrimSpace(rest)); err == nil {
					src, _ := strconv.Unquote(q)
					f.Add(file[:2], src)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, lang, src string) {
		if lang == "py" {
			lang = Python
		} else {
			lang = Node
		}
		Analyze(lang, src)
		// The identifier is read (called, printed), never assigned: an
		// assignment defines a name.
		extras := []string{"\nzz_unknown_q()\n", "\nprint(zz_unknown_q)\n"}
		if lang == Node {
			extras = []string{"\n;zz_unknown_q();\n", "\n;void zz_unknown_q;\n"}
		}
		for _, extra := range extras {
			if r := Analyze(lang, src+extra); r.Complete {
				t.Fatalf("%s %q with an unknown identifier appended is complete", lang, src+extra)
			}
			if r := Analyze(lang, extra+src); r.Complete {
				t.Fatalf("%s %q with an unknown identifier first is complete", lang, extra+src)
			}
		}
		for _, l := range []string{Perl, Ruby, PHP, PowerShell} {
			Analyze(l, src)
		}
	})
}
