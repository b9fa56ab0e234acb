package shell

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"mvdan.cc/sh/v3/syntax"
)

// The analyser reads the exact bytes bash will read (invariant 12). Two
// things stand between those bytes and mvdan.cc/sh's parser:
//
//   - the parser reads a carriage return as a blank and drops it before a
//     newline (so "\\\r\n" is a line continuation and "a\r# x" holds a
//     comment); bash reads it as an ordinary character of a word. The
//     parser is given the text with each CR replaced by a control byte it
//     treats as a word character and the input does not contain, of the
//     same length, so offsets still index the input; values are mapped
//     back (see level.cr).
//   - the parser drops NUL bytes; bash is never given them (an argument
//     string ends at the first NUL, and bash refuses a script holding
//     one). What would run is not what is shown: malformed.
//
// A person (or a model) reading the command sees something else again:
// terminals hide escape sequences and format characters, a no-break or
// ideographic space looks like a blank, and a fullwidth ＃ ＇ ＂ ＼ ；
// looks like syntax. That cleaned reading may only help to recognise
// names; when it has a different structure from the raw one, the line
// means one thing to its reader and another to bash, and it is
// malformed, with a message saying which character does it.

// crStandIns are the bytes that may stand in for a carriage return: C0
// controls the parser reads as word characters.
const crStandIns = "\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"

// parserText returns the text to give the parser for src, and the byte
// that stands for "\r" in it (0 when src has none). ok is false when src
// cannot be read the way bash reads it; why then says what is wrong.
func parserText(src string) (text string, cr byte, why string) {
	if i := strings.IndexByte(src, 0); i >= 0 {
		return "", 0, fmt.Sprintf("NUL byte at offset %d: bash is never given the text after it, so what would run is not what is shown", i)
	}
	if !utf8.ValidString(src) {
		i := invalidUTF8(src)
		return "", 0, fmt.Sprintf("byte 0x%02x at offset %d is not UTF-8: warden reads commands as UTF-8 text", src[i], i)
	}
	if strings.IndexByte(src, '\r') < 0 {
		return src, 0, ""
	}
	for i := 0; i < len(crStandIns); i++ {
		// Neither present nor producible by an escape ($'\1' decodes
		// to 0x01, which would map back to "\r").
		if strings.IndexByte(src, crStandIns[i]) < 0 && !escapeMakes(src, crStandIns[i]) {
			cr = crStandIns[i]
			return strings.ReplaceAll(src, "\r", string(cr)), cr, ""
		}
	}
	return "", 0, "carriage returns together with every other control character: too ambiguous to read"
}

// escapeMakes reports whether a backslash escape anywhere in src could
// decode to b in a $'…' string (\ooo, \xHH, \uHHHH, \UHHHHHHHH, \cX).
// It looks at every backslash, quoted or not: erring towards "yes" only
// skips a stand-in.
func escapeMakes(src string, b byte) bool {
	for i := strings.IndexByte(src, '\\'); i >= 0 && i+1 < len(src); {
		if v, ok := escapeValue(src[i+1:]); ok && v == uint64(b) {
			return true
		}
		next := strings.IndexByte(src[i+1:], '\\')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

func invalidUTF8(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return 0
}

// uncr maps the CR stand-in of a level back to "\r".
func uncr(s string, cr byte) string {
	if cr == 0 || strings.IndexByte(s, cr) < 0 {
		return s
	}
	return strings.ReplaceAll(s, string(cr), "\r")
}

// cleaned returns the reading of s that a person sees: ANSI escape
// sequences, C0/C1 control bytes (tab and newline stay), Unicode format
// characters (zero-width space, bidi overrides) removed, and
// compatibility forms folded with NFKC (fullwidth letters to ASCII, a
// no-break or ideographic space to a space). It returns s itself when
// nothing changes.
func cleaned(s string) string {
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
	if out == s {
		return s
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

// sameStructure reports whether two parses have the same syntax: the
// same nodes in the same order, with the same operators. Literal text
// may differ.
func sameStructure(a, b *syntax.File) bool {
	sa, sb := structure(a), structure(b)
	return string(sa) == string(sb)
}

// structure serialises a tree's node kinds and operators.
func structure(f *syntax.File) []byte {
	var out []byte
	walkTree(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			out = append(out, 's')
			if n.Background {
				out = append(out, '&')
			}
			if n.Negated {
				out = append(out, '!')
			}
		case *syntax.Word:
			out = append(out, 'w')
		case *syntax.Lit:
			// The parser may cut one literal into several; their number
			// is not structure.
		case *syntax.BinaryCmd:
			out = append(out, 'b', byte(n.Op))
		case *syntax.Redirect:
			out = append(out, 'r', byte(n.Op))
		case *syntax.CallExpr:
			out = append(out, 'c', byte(len(n.Args)))
		default:
			out = append(out, '?')
			out = fmt.Appendf(out, "%T", n)
		}
		return true
	})
	return out
}

// divergence names the first character of raw that reads differently
// once cleaned, for the malformed message.
func divergence(raw string) string {
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRuneInString(raw[i:])
		if r >= 0x80 || r < 0x20 && r != '\t' && r != '\n' || r == 0x7f {
			if c := cleaned(raw[i : i+n]); c != raw[i:i+n] || r == 0x1b {
				return fmt.Sprintf("%s at offset %d", runeName(r), i)
			}
		}
		i += n
	}
	return "a character that reads differently from how bash reads it"
}

// runeName describes a character for a message: U+3000, ESC, …
func runeName(r rune) string {
	switch {
	case r == 0x1b:
		return "an escape character (ESC)"
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("control character 0x%02x", r)
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf("C1 control character U+%04X", r)
	case unicode.Is(unicode.Zs, r):
		return fmt.Sprintf("U+%04X (a space that bash reads as part of a word)", r)
	case unicode.Is(unicode.Cf, r):
		return fmt.Sprintf("U+%04X (an invisible format character)", r)
	}
	return fmt.Sprintf("U+%04X %q (reads as %q)", r, string(r), norm.NFKC.String(string(r)))
}

// Visible renders s for people as it will run: printable ASCII, tabs and
// newlines as they are; every other byte or character escaped, so that
// nothing is hidden, overwritten or disguised (a no-break space is
// \u00a0, ESC is \x1b, a carriage return is \r). A backslash that starts
// something that looks like such an escape is doubled, so the rendering
// is unambiguous.
func Visible(s string) string {
	if plainASCII(s) && !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			if i+1 < len(s) && strings.IndexByte("xuUr\\", s[i+1]) >= 0 {
				b.WriteString(`\\`)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c < 0x7f || c == '\t' || c == '\n':
				b.WriteByte(c)
			case c == '\r':
				b.WriteString(`\r`)
			default:
				fmt.Fprintf(&b, `\x%02x`, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}
