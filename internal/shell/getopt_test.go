package shell

import (
	"strings"
	"testing"
)

func argv(s string) []Arg {
	var out []Arg
	for _, w := range strings.Fields(s) {
		out = append(out, Arg{Value: w, Static: true})
	}
	return out
}

// TestGetopt checks the one option model on the forms getopt_long and
// git's parse-options accept.
func TestGetopt(t *testing.T) {
	s := spec("n", "r|R|recursive", "f|force", "n|lines=", "color?", "x=", "preserve-env?", "preserve-root", "o|output=")
	tests := []struct {
		args     string
		has      []string
		not      []string
		value    map[string]string
		operands string
		unknown  int
		note     string
	}{
		{args: "x -rf /", has: []string{"r", "f", "recursive", "force"}, operands: "/"},
		{args: "x / -rf", has: []string{"r"}, operands: "/", value: nil},
		{args: "x -n5 a", value: map[string]string{"n": "5"}, operands: "a"},
		{args: "x -n 5 a", value: map[string]string{"lines": "5"}, operands: "a"},
		{args: "x -rn5", has: []string{"r"}, value: map[string]string{"n": "5"}},
		{args: "x --lines=7", value: map[string]string{"n": "7"}},
		{args: "x --lines 7 b", value: map[string]string{"n": "7"}, operands: "b"},
		{args: "x --li 7", value: map[string]string{"n": "7"}, note: "unique prefix"},
		{args: "x --recur", has: []string{"r"}},
		{args: "x --preserve-e", has: []string{"preserve-env"}, note: "prefix of one option only"},
		{args: "x --preserve a", unknown: 1, operands: "a", note: "ambiguous: preserve-env or preserve-root"},
		{args: "x --color file", has: []string{"color"}, operands: "file", note: "optional values are attached only"},
		{args: "x --color=auto", value: map[string]string{"color": "auto"}},
		{args: "x --force --no-force", not: []string{"f"}},
		{args: "x -- -rf", not: []string{"r"}, operands: "-rf"},
		{args: "x -z a", unknown: 1, operands: "a"},
		{args: "x -oout.txt", value: map[string]string{"o": "out.txt"}},
	}
	for _, tt := range tests {
		p := parseOpts(s, argv(tt.args), 1)
		for _, h := range tt.has {
			if !p.has(h) {
				t.Errorf("%s: lacks %s (%s)", tt.args, h, p.describe())
			}
		}
		for _, h := range tt.not {
			if p.has(h) {
				t.Errorf("%s: has %s (%s)", tt.args, h, p.describe())
			}
		}
		for k, v := range tt.value {
			if got, ok := p.value(k); !ok || got.Value != v {
				t.Errorf("%s: %s = %q %v, want %q", tt.args, k, got.Value, ok, v)
			}
		}
		if got := strings.Join(words(p.operands), " "); got != tt.operands {
			t.Errorf("%s: operands %q, want %q", tt.args, got, tt.operands)
		}
		if len(p.unknown) != tt.unknown {
			t.Errorf("%s: %d unknown, want %d", tt.args, len(p.unknown), tt.unknown)
		}
	}
}

func TestGetoptStyles(t *testing.T) {
	// A launcher stops at its command.
	l := spec("+", "u|user=", "i")
	p := parseOpts(l, argv("sudo -u root rm -rf /"), 1)
	if v, _ := p.value("u"); v.Value != "root" || p.end != 3 || strings.Join(words(p.operands), " ") != "rm -rf /" {
		t.Errorf("launcher: %s end %d", p.describe(), p.end)
	}
	// pflag spells long options in full.
	k := spec("!", "namespace=", "n")
	if p := parseOpts(k, argv("kubectl --name x"), 1); len(p.unknown) != 1 {
		t.Errorf("noAbbrev: %s", p.describe())
	}
	// Single-dash long options (terraform -chdir=x).
	tf := spec("-!", "chdir=")
	if p := parseOpts(tf, argv("terraform -chdir=infra destroy"), 1); !p.has("chdir") || words(p.operands)[0] != "destroy" {
		t.Errorf("singleDash: %s", p.describe())
	}
	// -NUM (nice -10), an option that stops the parse (python -c CODE),
	// optional digits (perl -l0), values of several words (bwrap).
	if p := parseOpts(spec("+#", "n="), argv("nice -10 reboot"), 1); strings.Join(words(p.operands), " ") != "reboot" {
		t.Errorf("numeric: %s", p.describe())
	}
	if p := parseOpts(spec("+", "c=!", "u"), argv("python -c code -u x"), 1); strings.Join(words(p.operands), " ") != "-u x" {
		t.Errorf("stop: %s", p.describe())
	}
	if p := parseOpts(spec("+", "l?#", "a", "n", "e="), argv("perl -lane code"), 1); !p.has("a") || !p.has("n") {
		t.Errorf("digits: %s", p.describe())
	}
	if p := parseOpts(spec("+!", "bind==", "die-with-parent"), argv("bwrap --bind / / --die-with-parent sh"), 1); words(p.operands)[0] != "sh" {
		t.Errorf("multi-word value: %s", p.describe())
	}
}
