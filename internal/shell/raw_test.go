package shell

import (
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ls -la", "ls -la"},
		{"ls\u00a0-la", `ls\u00a0-la`},
		{"printf ok\u3000#", `printf ok\u3000#`},
		{"a\x1b[31mb", `a\x1b[31mb`},
		{"a\rb", `a\rb`},
		{"caf\u00e9", `caf\u00e9`},
		{"\U0001F600", `\U0001f600`},
		{`echo \u00a0`, `echo \\u00a0`},
		{"a\tb\nc", "a\tb\nc"},
		{"x\xffy", `x\xffy`},
	}
	for _, tt := range tests {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRawReading: the analysis is of the bytes given; what reads
// differently to a person is malformed with a reason naming the byte.
func TestRawReading(t *testing.T) {
	for _, tt := range []struct{ in, reason string }{
		{"echo a\u00a0# ; reboot", "U+00A0"},
		{"echo x\x00; reboot", "NUL byte at offset 6"},
		{"echo \xff", "not UTF-8"},
		{"echo hi\uff1breboot", "U+FF1B"},
	} {
		a := Analyze(tt.in)
		if a.Verdict != Malformed || !strings.Contains(a.Error, tt.reason) {
			t.Errorf("%q: %s %q, want malformed naming %s", tt.in, a.Verdict, a.Error, tt.reason)
		}
		if a.Input != tt.in {
			t.Errorf("%q analysed as %q", tt.in, a.Input)
		}
	}
	// A CR is a word character to bash: the argv holds it.
	a := Analyze("rm -rf /tmp/x\r")
	if got := a.Commands[0].Argv[2].Value; got != "/tmp/x\r" {
		t.Errorf("argv[2] = %q", got)
	}
}
