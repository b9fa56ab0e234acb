package shell

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalize removes what can hide a command from a reader but not from a
// terminal or a shell's author: ANSI escape sequences, C0/C1 control bytes
// (tab and newline stay), Unicode format characters (zero-width space,
// bidi overrides), and compatibility forms (fullwidth letters fold to
// ASCII with NFKC).
func normalize(s string) string {
	if plainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b { // ESC: skip the whole sequence
			i = skipEscape(s, i)
			continue
		}
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || c == '\t' || c == '\n' {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			continue // invalid UTF-8 byte
		}
		if r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Cf, r) {
			continue // C1 controls, format characters
		}
		b.WriteRune(r)
	}
	out := b.String()
	if !plainASCII(out) {
		out = norm.NFKC.String(out)
	}
	return out
}

// plainASCII reports whether s is printable ASCII, tabs and newlines only.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || c < 0x20 && c != '\t' && c != '\n' {
			return false
		}
	}
	return true
}

// skipEscape returns the index after the escape sequence starting at i.
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters, intermediates, one final byte
		i++
		for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
			i++
		}
		return i + 1
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: until BEL or ST
		i++
		for i < len(s) {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			i++
		}
		return i
	}
	return i + 1 // two-byte sequence
}
