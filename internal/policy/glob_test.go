package policy

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		glob, subject string
		want          bool
	}{
		{"sudo *", "sudo -n id", true},
		{"sudo *", "SUDO -N ID", true},
		{"SUDO *", "sudo rm", true},
		{"sudo *", "sudo", false}, // "*" needs the space before it to match
		{"sudo*", "sudo", true},
		{"rm -rf *", "rm -rf /tmp/x y", true}, // * crosses "/" and spaces
		{"*", "", true},
		{"*", "anything at all\nwith newline", true},
		{"git push *", "git push --force origin main", true},
		{"git push *", "git pull origin", false},
		{"?", "a", true},
		{"?", "é", true}, // one character, not one byte
		{"?", "ab", false},
		{"?", "", false},
		{"curl * | sh", "curl http://x | sh", true},
		{"curl * | sh", "curl http://x | sh -x", false}, // anchored at the end
		{"x", "ax", false},                              // anchored at the start
		{"[abc]at", "bat", true},
		{"[abc]at", "Bat", true}, // classes fold case too
		{"[abc]at", "rat", false},
		{"[!abc]at", "rat", true},
		{"[!abc]at", "cat", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]", "]", true},    // ']' first in a class is literal
		{"[!]]", "a", true},   // and after '!'
		{"[!]]", "]", false},  //
		{"[^a]", "^", true},   // '^' is literal, as in fnmatch
		{"[^a]", "b", false},  //
		{`[\]`, `\`, true},    // backslash is literal inside a class
		{`a\*`, `a\bc`, true}, // and outside: fnmatch has no escapes
		{`a\*`, `a*`, false},
		{"a.b", "a.b", true}, // regexp metacharacters are literal
		{"a.b", "axb", false},
		{"(x)+{1}$^|", "(x)+{1}$^|", true},
		{"  rm   -rf  ", "rm -rf", true}, // pattern white space is collapsed
		{"rm\t-rf", "rm -rf", true},
		{"ÉCHO *", "écho x", true},
	}
	for _, tt := range tests {
		t.Run(tt.glob+"~"+tt.subject, func(t *testing.T) {
			g, err := CompileGlob(tt.glob)
			if err != nil {
				t.Fatalf("CompileGlob(%q): %v", tt.glob, err)
			}
			if got := g.Match(tt.subject); got != tt.want {
				t.Errorf("Glob(%q).Match(%q) = %v, want %v", tt.glob, tt.subject, got, tt.want)
			}
			if g.String() != tt.glob {
				t.Errorf("String() = %q, want the glob as written", g.String())
			}
		})
	}
}

func TestCompileGlobErrors(t *testing.T) {
	tests := []struct {
		glob, wantMsg string
	}{
		{"", "empty pattern"},
		{"   ", "empty pattern"},
		{"rm [abc", "unclosed ["},
		{"[", "unclosed ["},
		{"[]", "unclosed ["}, // the ']' is literal, so still open
		{"[!]", "unclosed ["},
		{"[z-a]", "invalid character class range"},
	}
	for _, tt := range tests {
		t.Run(tt.glob, func(t *testing.T) {
			_, err := CompileGlob(tt.glob)
			if err == nil {
				t.Fatalf("CompileGlob(%q) succeeded, want error", tt.glob)
			}
			if !errors.Is(err, ErrMalformedGlob) {
				t.Errorf("error %v does not wrap ErrMalformedGlob", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
			if !strings.Contains(err.Error(), `"`+tt.glob+`"`) {
				t.Errorf("error %q does not name the glob %q", err, tt.glob)
			}
			if strings.Contains(err.Error(), "(?is") {
				t.Errorf("error %q leaks the translated regexp", err)
			}
		})
	}
}

func TestCollapseSpace(t *testing.T) {
	tests := map[string]string{
		"":                 "",
		"a":                "a",
		"a b":              "a b",
		" a":               "a",
		"a ":               "a",
		"a  b":             "a b",
		"a\tb":             "a b",
		"a\n\nb  c":        "a b c",
		"a\u00a0\u00a0b":   "a b", // Unicode spaces too
		"écho  x":          "écho x",
		"already clean ok": "already clean ok",
	}
	for in, want := range tests {
		if got := collapseSpace(in); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGlobPrefilterSound checks that the literal pre-filter never
// rejects a subject the regexp accepts: the regexp is the authority and
// the pre-filter only saves time.
func TestGlobPrefilterSound(t *testing.T) {
	// Few distinct characters, including the non-ASCII ones that fold to
	// ASCII letters under (?i), so matches are frequent.
	alphabet := []rune("abkKsS \t*?[]!-\u212a\u017féÉ/")
	rapid.Check(t, func(t *rapid.T) {
		pat := string(rapid.SliceOfN(rapid.SampledFrom(alphabet), 1, 8).Draw(t, "pattern"))
		g, err := CompileGlob(pat)
		if err != nil {
			t.Skip("malformed")
		}
		subj := string(rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 10).Draw(t, "subject"))
		if got, want := g.Match(subj), g.re.MatchString(subj); got != want {
			t.Fatalf("Glob(%q).Match(%q) = %v, regexp says %v (literals %+v)", pat, subj, got, want, g.lit)
		}
	})
}
