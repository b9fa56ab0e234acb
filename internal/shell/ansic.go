package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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

// nul reports an escape (after its backslash) that decodes to a NUL byte.
func nul(s string) bool {
	switch {
	case s == "":
		return false
	case s[0] >= '0' && s[0] <= '7':
		j := 0
		for j < len(s) && j < 3 && s[j] >= '0' && s[j] <= '7' {
			j++
		}
		n, _ := strconv.ParseUint(s[:j], 8, 16)
		return byte(n) == 0
	case s[0] == 'x' || s[0] == 'u' || s[0] == 'U':
		max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
		n, j := hexRun(s, 1, max)
		return j > 1 && (s[0] == 'x' && byte(n) == 0 || s[0] != 'x' && n == 0)
	case s[0] == 'c' && len(s) > 1:
		return s[1]&0x1f == 0
	}
	return false
}
