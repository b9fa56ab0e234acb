package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// singleQuoted is the value of '…' (its body as written) or of $'…'
// (its body decoded).
func singleQuoted(q *syntax.SglQuoted) string {
	if q.Dollar {
		return ansiC(q.Value)
	}
	return q.Value
}

// ansiC decodes the body of a bash $'…' string. mvdan.cc/sh's expander
// leaves \cX alone, which bash turns into a control character, so warden
// decodes these itself (the differential fuzzer found the gap).
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		if nul(s[i:]) {
			break // bash ends the string at a NUL it decodes
		}
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				x := s[i]
				if x == '\\' && i+1 < len(s) && s[i+1] == '\\' {
					i++
				}
				b.WriteByte(x & 0x1f)
				if x == 0x01 {
					b.WriteByte(x) // doubled, as after an unknown escape
				}
			} else {
				b.WriteString(`\c`)
			}
		case 'x':
			n, j := hexRun(s, i+1, 2)
			if j == i+1 {
				b.WriteString(`\x`)
				continue
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			n, j := hexRun(s, i+1, max)
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if n > utf8.MaxRune {
				n = utf8.RuneError
			}
			b.WriteRune(rune(n))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
			if e == 0x01 {
				// bash keeps its own quoting byte (CTLESC) doubled
				// after an unknown escape: $'\<01>' is \, 01, 01.
				b.WriteByte(e)
			}
		}
	}
	return b.String()
}

// hexRun reads up to max hex digits from s[i:], returning the value and
// the index after them.
func hexRun(s string, i, max int) (uint64, int) {
	j := i
	for j < len(s) && j < i+max && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
		j++
	}
	if j == i {
		return 0, i
	}
	n, _ := strconv.ParseUint(s[i:j], 16, 64)
	return n, j
}

// escapeValue decodes the escape at the start of e (after its
// backslash) when it names a character by number or control letter:
// \ooo (as a byte), \xHH, \uHHHH, \UHHHHHHHH, \cX. ok is false for any
// other escape.
func escapeValue(e string) (v uint64, ok bool) {
	switch {
	case e == "":
		return 0, false
	case e[0] >= '0' && e[0] <= '7':
		j := 0
		for j < len(e) && j < 3 && e[j] >= '0' && e[j] <= '7' {
			j++
		}
		n, _ := strconv.ParseUint(e[:j], 8, 16)
		return uint64(byte(n)), true
	case e[0] == 'x' || e[0] == 'u' || e[0] == 'U':
		max := 2
		if e[0] == 'u' {
			max = 4
		} else if e[0] == 'U' {
			max = 8
		}
		n, j := hexRun(e, 1, max)
		return n, j > 1
	case e[0] == 'c' && len(e) > 1:
		return uint64(e[1] & 0x1f), true
	}
	return 0, false
}

// nul reports an escape (after its backslash) that decodes to a NUL byte.
func nul(s string) bool {
	v, ok := escapeValue(s)
	return ok && v == 0
}
