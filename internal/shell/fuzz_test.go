package shell

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// rawSeeds are inputs whose bytes read differently to a person, to
// bash and to a careless parser: Unicode spaces, format characters, C0
// and C1 controls, DEL, ESC sequences, fullwidth punctuation, carriage
// returns.
var rawSeeds = []string{
	"printf ok\u3000#; shutdown -h now",
	"echo a\u00a0# ; id",
	"echo a\r# ; id",
	"echo hi \\\r\nid",
	"ls\r\nid\r\n",
	"echo \u200b#x; id",
	"r\u200dm -rf x",
	"echo x\u0085y; id",
	"echo a\x7f# b",
	"echo \x1b[31mred\x1b[0m; id",
	"\x1b]0;title\x07echo x",
	"echo ＂a b＂ ＃ c ；id",
	"echo ＇x＇ ＼ y",
	"echo a\u2028b\u2029c",
	"echo \u202eabc\u202c; id",
	"echo a\x01b\x02c\x1fd",
	"echo a\u3000b c\u00a0d",
	"x=$'\\r'; echo \"$x\"",
	"echo a\u180eb\ufeffc",
	"echo \u205fa\u2000b",
}

// FuzzAnalyze checks that every input gets a verdict quickly and without
// a panic, and, against real bash on the raw bytes, that what the
// analysis reads is what bash runs: the argv of a plain static command,
// and the simple commands of a line made only of them (bash's DEBUG
// trap lists them without running them; see bashCommands).
func FuzzAnalyze(f *testing.F) {
	for _, cases := range loadCorpus(f) {
		for _, c := range cases {
			f.Add(c.Cmd)
		}
	}
	for _, s := range rawSeeds {
		f.Add(s)
	}
	bash, _ := exec.LookPath("bash")
	if os.Getenv("WARDEN_FULL") != "" && bash == "" {
		f.Fatal("bash is needed for the differential check")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		a := Analyze(src)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("analysis took %v", d)
		}
		switch a.Verdict {
		case Safe, Dangerous, Hardline, Malformed:
		default:
			t.Fatalf("no verdict: %q", a.Verdict)
		}
		if a.Verdict == Malformed && a.Error == "" {
			t.Fatal("malformed without a reason")
		}
		if a.Input != src {
			t.Fatalf("input of %d bytes analysed as %d other bytes", len(src), len(a.Input))
		}
		for _, fd := range a.Findings {
			if fd.Span.Start < 0 || fd.Span.End > len(a.Input) || fd.Span.Start > fd.Span.End {
				t.Fatalf("finding %s span %v outside input of %d bytes", fd.Class, fd.Span, len(a.Input))
			}
		}
		if bash == "" || a.Verdict == Malformed {
			return
		}
		if plainStatic(a) {
			if want := bashArgv(t, bash, dir, a.Input); want != nil {
				got := a.Commands[0].Words()
				if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
					t.Fatalf("argv of %q: analysis %q, bash %q", a.Input, got, want)
				}
			}
		}
		if mine, ok := simpleCommands(src); ok {
			theirs, ok := bashCommands(bash, dir, src)
			if !ok {
				return
			}
			if len(mine) != len(theirs) {
				t.Fatalf("%q: analysis reads %d simple commands %q, bash runs %d %q", src, len(mine), mine, len(theirs), theirs)
			}
			if !strings.Contains(src, "$'") && !strings.Contains(src, "$\"") && !strings.Contains(src, `\`) {
				for i := range mine {
					if mine[i] != theirs[i] {
						t.Fatalf("%q: command %d reads %q, bash runs %q", src, i+1, mine[i], theirs[i])
					}
				}
			}
		}
	})
}

// plainStatic reports an analysis of one simple command whose words are
// all static, with nothing the differential check cannot reproduce.
func plainStatic(a *Analysis) bool {
	if a.Verdict == Malformed || len(a.Commands) == 0 {
		return false
	}
	for _, c := range a.Commands[1:] {
		if len(c.Via) == 0 || c.Via[0] != asDisplayed {
			return false
		}
	}
	c := a.Commands[0]
	// A keyword such as time or ! before the command is not in argv.
	if c.Span.Start != len(a.Input)-len(strings.TrimLeft(a.Input, " \t")) {
		return false
	}
	if len(c.Via) > 0 || len(c.Assigns) > 0 || len(c.Redirs) > 0 {
		return false
	}
	for _, w := range c.Argv {
		if !w.Static || w.Glob {
			return false
		}
	}
	// Tilde, history and comments depend on the user's shell state.
	return !strings.ContainsAny(a.Input, "~!#;&|<>()`\n{}") && !strings.Contains(a.Input, "$(")
}

// bashArgv asks bash how it splits src into words.
func bashArgv(t *testing.T, bash, dir, src string) []string {
	out, ok := runBash(bash, dir, "set -f; printf '%s\\0' "+src)
	if !ok {
		return nil // bash rejected it: nothing to compare
	}
	if out == "" {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
}

// simpleCommands returns the source text of each simple command of src
// as the analyser's parser reads the raw bytes, words joined by one
// space, when src is only simple commands without assignments or
// redirections, joined by ;, &, newlines and pipes: then bash runs each
// exactly once, in order.
func simpleCommands(src string) ([]string, bool) {
	text, cr, why := parserText(src)
	if why != "" || strings.Contains(src, "\\\n") {
		return nil, false
	}
	f, err := parse(text)
	if err != nil {
		return nil, false
	}
	var out []string
	var add func(st *syntax.Stmt) bool
	add = func(st *syntax.Stmt) bool {
		if st.Negated || len(st.Redirs) > 0 {
			return false
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op != syntax.Pipe {
				return false
			}
			return add(c.X) && add(c.Y)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 {
				return false
			}
			words := make([]string, len(c.Args))
			for i, w := range c.Args {
				words[i] = uncr(text[w.Pos().Offset():w.End().Offset()], cr)
				if strings.ContainsAny(words[i], "`\n(") || strings.Contains(words[i], "${") {
					return false // bash prints these differently
				}
			}
			out = append(out, strings.Join(words, " "))
			return true
		}
		return false
	}
	for _, st := range f.Stmts {
		if !add(st) {
			return nil, false
		}
	}
	return out, len(out) > 0
}

// bashCommands lists the simple commands bash would run for src, in
// order, without running any: with extdebug, a DEBUG trap that fails
// skips the command it precedes, and $BASH_COMMAND is that command's
// text. The shell runs with an empty PATH in a scratch directory all the
// same.
func bashCommands(bash, dir, src string) ([]string, bool) {
	prologue := "shopt -s extdebug; set -T; trap 'printf \"%s\\0\" \"$BASH_COMMAND\"; false' DEBUG\n"
	out, ok := runBash(bash, dir, prologue+src)
	if !ok {
		return nil, false
	}
	// bash's own quoting of CTLESC and CTLNUL shows in $BASH_COMMAND.
	out = strings.NewReplacer("\x01\x01", "\x01", "\x01\x7f", "\x7f").Replace(out)
	list := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	if out == "" {
		list = nil
	}
	return list, true
}

// runBash runs script with bash -c in dir, without a PATH, and returns
// its output when bash exited 0 with nothing on stderr.
func runBash(bash, dir, script string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = []string{"PATH=", "IFS= \t\n", "LC_ALL=C.UTF-8"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		return "", false
	}
	return out.String(), true
}
