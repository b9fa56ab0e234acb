package shell

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// FuzzAnalyze checks that every input gets a verdict quickly and without
// a panic, and, where the analysis claims a plain static argv, that real
// bash splits the words the same way.
func FuzzAnalyze(f *testing.F) {
	for _, cases := range loadCorpus(f) {
		for _, c := range cases {
			f.Add(c.Cmd)
		}
	}
	bash, _ := exec.LookPath("bash")
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
		for _, fd := range a.Findings {
			if fd.Span.Start < 0 || fd.Span.End > len(a.Input) || fd.Span.Start > fd.Span.End {
				t.Fatalf("finding %s span %v outside input of %d bytes", fd.Class, fd.Span, len(a.Input))
			}
		}
		if bash == "" || !plainStatic(a) {
			return
		}
		want := bashArgv(t, bash, a.Input)
		if want == nil {
			return
		}
		got := a.Commands[0].Words()
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("argv of %q: analysis %q, bash %q", a.Input, got, want)
		}
	})
}

// plainStatic reports an analysis of one simple command whose words are
// all static, with nothing the differential check cannot reproduce.
func plainStatic(a *Analysis) bool {
	if a.Verdict == Malformed || len(a.Commands) != 1 {
		return false
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
func bashArgv(t *testing.T, bash, src string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", "set -f; printf '%s\\0' "+src)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "IFS= \t\n"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil // bash rejected it: nothing to compare
	}
	s := out.String()
	if s == "" {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}
