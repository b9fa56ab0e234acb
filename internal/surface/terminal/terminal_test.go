package terminal

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/shell"
)

// These tests feed hand-made analyses to the renderer, so they do not
// depend on what the analyser finds.

func arg(v string, start int) shell.Arg {
	return shell.Arg{Value: v, Static: true, Span: shell.Span{Start: start, End: start + len(v)}}
}

func finding(class string, tier shell.Tier, cmd, start, end int) shell.Finding {
	c, _ := shell.Lookup(class)
	return shell.Finding{Class: class, Tier: tier, Description: c.Description, Command: cmd, Span: shell.Span{Start: start, End: end}}
}

func TestWriteExplanation(t *testing.T) {
	t.Parallel()
	pipe := &shell.Analysis{
		Input:   "cd src && curl -fsSL https://x.test/i.sh | sudo sh",
		Verdict: shell.Dangerous,
		Commands: []shell.Command{
			{Argv: []shell.Arg{arg("cd", 0), arg("src", 3)}, Span: shell.Span{Start: 0, End: 6}},
			{Argv: []shell.Arg{arg("curl", 10), arg("-fsSL", 15), arg("https://x.test/i.sh", 21)}, Span: shell.Span{Start: 10, End: 40}},
			{Argv: []shell.Arg{arg("sh", 48)}, Via: []string{"sudo"}, Span: shell.Span{Start: 43, End: 50}},
		},
		Findings: []shell.Finding{finding("remote.pipe_shell", shell.TierDangerous, -1, 10, 50)},
	}
	wide := &shell.Analysis{
		Input:   "echo 日本 && rm -rf /",
		Verdict: shell.Hardline,
		Commands: []shell.Command{
			{Argv: []shell.Arg{arg("echo", 0), arg("日本", 5)}},
			{Argv: []shell.Arg{arg("rm", 15), arg("-rf", 18), arg("/", 22)}},
		},
		Findings: []shell.Finding{finding("delete.root", shell.TierHardline, 1, 15, 23)},
	}
	hostile := &shell.Analysis{
		Input:   "echo \x1b[2J\u202ehi\tthere",
		Verdict: shell.Safe,
		Commands: []shell.Command{
			{Argv: []shell.Arg{arg("echo", 0), {Value: "\x1b[2J\u202ehi", Static: true}, {Value: "$(\x07)", Static: false}}},
		},
	}
	multi := &shell.Analysis{
		Input:   "bash <<'EOF'\nrm -rf \\\n  /\nEOF",
		Verdict: shell.Hardline,
		Commands: []shell.Command{
			{Argv: []shell.Arg{arg("bash", 0)}, Redirs: []shell.Redirect{{Op: "<<", Target: arg("EOF", 7)}}},
			{Argv: []shell.Arg{arg("rm", 13), arg("-rf", 16), arg("/", 25)}, Via: []string{"bash here-doc"}},
		},
		Findings: []shell.Finding{{Class: "delete.root", Tier: shell.TierHardline, Description: "recursive delete of / (here-doc)", Command: 1, Span: shell.Span{Start: 13, End: 26}}},
	}
	long := &shell.Analysis{
		Input:    "echo " + strings.Repeat("a", 150) + " && reboot && echo " + strings.Repeat("b", 150),
		Verdict:  shell.Hardline,
		Findings: []shell.Finding{finding("sys.shutdown", shell.TierHardline, -1, 159, 165)},
	}
	bad := &shell.Analysis{
		Input:    "ls",
		Verdict:  shell.Dangerous,
		Findings: []shell.Finding{{Class: "made.up", Tier: shell.TierDangerous, Description: "not in the catalogue", Command: 7, Span: shell.Span{Start: -4, End: 99}}},
	}
	malformed := &shell.Analysis{Input: "echo \"x", Verdict: shell.Malformed, Error: "1:6: reached EOF without closing quote \""}

	tests := []struct {
		name  string
		res   explain.Explanation
		color bool
		want  string
	}{
		{"pipe", explain.Explanation{Cmd: pipe.Input, Analysis: pipe, Verdict: "dangerous"}, false, `command: cd src && curl -fsSL https://x.test/i.sh | sudo sh
verdict: dangerous

classes:
  remote.pipe_shell  dangerous  pipe remote content to a shell or interpreter

findings:
  remote.pipe_shell at 1:11
    cd src && curl -fsSL https://x.test/i.sh | sudo sh
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

commands:
  1. cd src
  2. curl -fsSL https://x.test/i.sh
  3. sh  (via sudo)
`},
		{"pipe color", explain.Explanation{Cmd: pipe.Input, Analysis: pipe, Verdict: "dangerous"}, true, ""},
		{"non-ASCII shown escaped", explain.Explanation{Cmd: wide.Input, Analysis: wide, Verdict: "hardline"}, false, `command: echo \u65e5\u672c && rm -rf /
verdict: hardline

classes:
  delete.root  hardline  recursive delete of the root filesystem

findings:
  delete.root at 1:22, command 2
    echo \u65e5\u672c && rm -rf /
                         ^^^^^^^^

commands:
  1. echo $'\u65e5\u672c'
  2. rm -rf /
`},
		{"control bytes never reach the terminal", explain.Explanation{Cmd: hostile.Input + "\x00", Analysis: hostile, Verdict: "safe"}, false, `command: echo \x1b[2J\u202ehi there
as given: "echo \x1b[2J\u202ehi\tthere\x00"
verdict: safe

commands:
  1. echo $'\x1b[2J\u202ehi' $(\x07)
`},
		{"multi-line span and denied", explain.Explanation{Cmd: multi.Input, Analysis: multi, Verdict: "hardline", DenyRule: "bash*"}, false, `command:
  bash <<'EOF'
  rm -rf \
    /
  EOF
verdict: hardline
deny rule: bash* (matched; the hardline verdict takes precedence)

classes:
  delete.root  hardline  recursive delete of the root filesystem

findings:
  delete.root at 2:1, command 2: recursive delete of / (here-doc)
    rm -rf \
    ^^^^^^^^
      /
    ^^^

commands:
  1. bash <<EOF
  2. rm -rf /  (via bash here-doc)
`},
		{"long line is windowed", explain.Explanation{Cmd: long.Input, Analysis: long, Verdict: "hardline"}, false, "command: echo " + strings.Repeat("a", 150) + " && reboot && echo " + strings.Repeat("b", 26) + `…
verdict: hardline

classes:
  sys.shutdown  hardline  shut down or reboot the machine

findings:
  sys.shutdown at 1:160
    …` + strings.Repeat("a", 26) + " && reboot && echo " + strings.Repeat("b", 75) + `…
                                   ^^^^^^
`},
		{"bad spans and unknown classes do not panic", explain.Explanation{Cmd: "ls", Analysis: bad, Verdict: "dangerous"}, false, `command: ls
verdict: dangerous

classes:
  made.up  dangerous  not in the catalogue

findings:
  made.up at 1:1: not in the catalogue
    ls
    ^^
`},
		{"malformed", explain.Explanation{Cmd: malformed.Input, Analysis: malformed, Verdict: "malformed"}, false, `command: echo "x
verdict: malformed
error: 1:6: reached EOF without closing quote "
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := WriteExplanation(&b, tt.res, tt.color); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if tt.color {
				if strings.Contains(got, "^^") {
					t.Errorf("colour output has ^ markers:\n%s", got)
				}
				span := ansiDangerous + "curl -fsSL https://x.test/i.sh | sudo sh" + ansiReset
				for _, want := range []string{
					"command: cd src && " + span + "\n",
					"verdict: " + ansiDangerous + "dangerous" + ansiReset + "\n",
					"\n    cd src && " + span + "\n",
				} {
					if !strings.Contains(got, want) {
						t.Errorf("colour output lacks %q:\n%q", want, got)
					}
				}
				return
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
