package codescan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A Python tokenizer: names (NFKC-normalised, as Python reads
// identifiers), numbers, strings with every prefix and escape (f-strings
// keep their raw body for the parser), operators, logical newlines and
// indentation. Anything it cannot read is an error.

type ptokKind uint8

const (
	ptEOF ptokKind = iota
	ptName
	ptNum
	ptStr
	ptOp
	ptNewline
	ptIndent
	ptDedent
)

type ptok struct {
	k    ptokKind
	s    string // name, operator, number text
	val  *value // decoded string (ptStr)
	f    bool   // f-string: raw holds the body
	raw  string
	line int
}

type pyLexer struct {
	src    string
	i      int
	line   int
	depth  int // bracket depth
	indent []int
	toks   []ptok
	atBOL  bool
}

// codingCookie is a source encoding declaration (PEP 263) on one of
// the first two lines.
var codingCookie = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

func lexPython(src string) ([]ptok, error) {
	src = strings.TrimPrefix(src, "\ufeff")
	// Python ends lines at \n, \r\n and a lone \r: a \r must end a
	// comment here as it does there.
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	// A file declaring another source encoding (utf-7, say) is decoded
	// by Python into text this reading does not see.
	for i, line := range strings.SplitN(src, "\n", 3)[:min(2, strings.Count(src, "\n")+1)] {
		if m := codingCookie.FindStringSubmatch(line); m != nil {
			switch strings.ToLower(strings.ReplaceAll(m[1], "_", "-")) {
			case "utf-8", "utf8", "utf-8-sig", "ascii", "us-ascii":
			default:
				return nil, fmt.Errorf("line %d: source encoding %q is not read", i+1, m[1])
			}
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			break // the cookie counts only before code
		}
	}
	l := &pyLexer{src: src, line: 1, indent: []int{0}, atBOL: true}
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.toks, nil
}

func (l *pyLexer) emit(t ptok) {
	t.line = l.line
	l.toks = append(l.toks, t)
}

func (l *pyLexer) errf(format string, args ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{l.line}, args...)...)
}

func (l *pyLexer) run() error {
	for {
		if l.atBOL && l.depth == 0 {
			if err := l.indentation(); err != nil {
				return err
			}
		}
		if l.i >= len(l.src) {
			break
		}
		c := l.src[l.i]
		switch {
		case c == '\n':
			l.i++
			l.line++
			if l.depth == 0 {
				if n := len(l.toks); n > 0 && l.toks[n-1].k != ptNewline && l.toks[n-1].k != ptIndent && l.toks[n-1].k != ptDedent {
					l.emit(ptok{k: ptNewline})
				}
				l.atBOL = true
			}
		case c == ' ' || c == '\t' || c == '\f' || c == '\r':
			l.i++
		case c == '#':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
		case c == '\\':
			if l.i+1 < len(l.src) && l.src[l.i+1] == '\n' {
				l.i += 2
				l.line++
				continue
			}
			if l.i+2 < len(l.src) && l.src[l.i+1] == '\r' && l.src[l.i+2] == '\n' {
				l.i += 3
				l.line++
				continue
			}
			return l.errf("stray backslash")
		case c >= '0' && c <= '9' || c == '.' && l.i+1 < len(l.src) && l.src[l.i+1] >= '0' && l.src[l.i+1] <= '9':
			l.number()
		case c == '"' || c == '\'':
			if err := l.str(""); err != nil {
				return err
			}
		default:
			r, w := utf8.DecodeRuneInString(l.src[l.i:])
			if r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Other_ID_Start, r) {
				start := l.i
				l.i += w
				for l.i < len(l.src) {
					r, w := utf8.DecodeRuneInString(l.src[l.i:])
					if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) {
						l.i += w
						continue
					}
					break
				}
				name := l.src[start:l.i]
				if l.i < len(l.src) && (l.src[l.i] == '"' || l.src[l.i] == '\'') && isStrPrefix(name) {
					if err := l.str(strings.ToLower(name)); err != nil {
						return err
					}
					continue
				}
				l.emit(ptok{k: ptName, s: norm.NFKC.String(name)})
				continue
			}
			if err := l.op(); err != nil {
				return err
			}
		}
	}
	if l.depth != 0 {
		return l.errf("unclosed bracket")
	}
	if n := len(l.toks); n > 0 && l.toks[n-1].k != ptNewline && l.toks[n-1].k != ptDedent {
		l.emit(ptok{k: ptNewline})
	}
	for len(l.indent) > 1 {
		l.indent = l.indent[:len(l.indent)-1]
		l.emit(ptok{k: ptDedent})
	}
	l.emit(ptok{k: ptEOF})
	return nil
}

func isStrPrefix(s string) bool {
	switch strings.ToLower(s) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf", "t", "tr", "rt":
		return true
	}
	return false
}

// indentation reads the start of a line and emits INDENT/DEDENT. Blank
// and comment-only lines do not count.
func (l *pyLexer) indentation() error {
	for {
		col := 0
		j := l.i
		for j < len(l.src) {
			switch l.src[j] {
			case ' ':
				col++
			case '\t':
				col = (col/8 + 1) * 8
			case '\f':
				col = 0
			default:
				goto done
			}
			j++
		}
	done:
		if j >= len(l.src) {
			l.i = j
			return nil
		}
		if c := l.src[j]; c == '\n' || c == '#' || c == '\r' {
			for j < len(l.src) && l.src[j] != '\n' {
				j++
			}
			if j < len(l.src) {
				j++
				l.line++
			}
			l.i = j
			continue
		}
		l.i = j
		l.atBOL = false
		top := l.indent[len(l.indent)-1]
		switch {
		case col > top:
			l.indent = append(l.indent, col)
			l.emit(ptok{k: ptIndent})
		case col < top:
			for col < l.indent[len(l.indent)-1] {
				l.indent = l.indent[:len(l.indent)-1]
				l.emit(ptok{k: ptDedent})
			}
			if col != l.indent[len(l.indent)-1] {
				return l.errf("inconsistent dedent")
			}
		}
		return nil
	}
}

func (l *pyLexer) number() {
	start := l.i
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' {
			l.i++
			continue
		}
		if (c == '+' || c == '-') && l.i > start && (l.src[l.i-1] == 'e' || l.src[l.i-1] == 'E') && !strings.HasPrefix(strings.ToLower(l.src[start:l.i]), "0x") {
			l.i++
			continue
		}
		break
	}
	l.emit(ptok{k: ptNum, s: l.src[start:l.i]})
}

var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
	"+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=", "!"}

func (l *pyLexer) op() error {
	for _, o := range pyOps {
		if strings.HasPrefix(l.src[l.i:], o) {
			l.i += len(o)
			switch o {
			case "(", "[", "{":
				l.depth++
			case ")", "]", "}":
				if l.depth == 0 {
					return l.errf("unbalanced %q", o)
				}
				l.depth--
			}
			l.emit(ptok{k: ptOp, s: o})
			return nil
		}
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.i:])
	return l.errf("unexpected character %q", r)
}

// str reads a string literal at l.i with the given (lower-case) prefix.
func (l *pyLexer) str(prefix string) error {
	q := l.src[l.i]
	triple := strings.HasPrefix(l.src[l.i:], strings.Repeat(string(q), 3))
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	l.i += len(delim)
	start := l.i
	raw := strings.Contains(prefix, "r")
	for {
		if l.i >= len(l.src) {
			return l.errf("unterminated string")
		}
		c := l.src[l.i]
		if c == '\\' {
			if l.i+1 < len(l.src) && l.src[l.i+1] == '\n' {
				l.line++
			}
			l.i += 2
			continue
		}
		if c == '\n' {
			if !triple {
				return l.errf("newline in string")
			}
			l.line++
		}
		if strings.HasPrefix(l.src[l.i:], delim) {
			break
		}
		l.i++
	}
	body := l.src[start:l.i]
	l.i += len(delim)
	if strings.ContainsAny(prefix, "ft") {
		l.emit(ptok{k: ptStr, f: true, raw: body, s: prefix})
		return nil
	}
	if raw {
		l.emit(ptok{k: ptStr, val: str(body)})
		return nil
	}
	l.emit(ptok{k: ptStr, val: pyUnescape(body, strings.Contains(prefix, "b"))})
	return nil
}

// pyUnescape decodes Python escapes. \N{name} is left as a run-time
// part: the table of names is not kept here, and guessing would let a
// payload through.
func pyUnescape(s string, bytes bool) *value {
	if !strings.Contains(s, `\`) {
		return str(s)
	}
	out := &value{k: kStr}
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out.parts = append(out.parts, part{lit: b.String()})
			b.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(c)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
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
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if (bytes && c != 'x') || i+1+n > len(s) {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			if bytes || c == 'x' && v < 0x80 {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += n
		case 'N':
			if bytes {
				b.WriteString(`\N`)
				continue
			}
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(`\N`)
				continue
			}
			flush()
			out.parts = append(out.parts, part{dyn: true})
			i += end
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			if bytes || v < 0x80 {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	flush()
	if len(out.parts) == 0 {
		return str("")
	}
	return out
}
