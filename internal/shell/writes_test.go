package shell

import "testing"

// TestWritesCorpus runs the cases of this family's rules (writes.go).
func TestWritesCorpus(t *testing.T) { runCorpus(t, "writes", "secrets") }

// TestEchoEscapes: echo -e's escapes as bash 5 prints them (checked
// against bash when the table was written).
func TestEchoEscapes(t *testing.T) {
	tests := []struct{ flag, arg, want string }{
		{"-e", `\x72\x6d -rf ~`, "rm -rf ~\n"},
		{"-ne", `a\tb\c zz`, "a\tb"},
		{"-e", `\0101\0102`, "AB\n"},
		{"-E", `\x41`, `\x41` + "\n"},
		{"-e", `\u00e9\x`, "\u00e9\\x\n"},
		{"-en", `\\n`, `\n`},
		{"-nE", "x", "x"},
		{"-e", `a\qb`, `a\qb` + "\n"},
		{"-e", `\101`, `\101` + "\n"},
		{"-e", `\x4g`, "\x04g\n"},
	}
	for _, tt := range tests {
		args := []Arg{{Value: "echo", Static: true}, {Value: tt.flag, Static: true}, {Value: tt.arg, Static: true}}
		got, ok := echoOutput("echo", args)
		if !ok || got != tt.want {
			t.Errorf("echo %s %q = %q, want %q", tt.flag, tt.arg, got, tt.want)
		}
	}
}
