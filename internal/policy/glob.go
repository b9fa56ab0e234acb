package policy

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// ErrMalformedGlob is returned (wrapped, with the glob named) when a
// pattern cannot be compiled: an unclosed "[" class, an inverted range,
// or an empty pattern.
var ErrMalformedGlob = errors.New("malformed glob")

// Glob is a compiled, case-insensitive, fnmatch-style pattern:
//
//	"*"      any run of characters, including "/", spaces and newlines
//	"?"      exactly one character
//	"[abc]"  one character from the class; "[a-z]" ranges; "[!abc]" negates
//
// Every other character, backslash included, matches itself: fnmatch has
// no escape character, and the reference system's deny rules relied on
// that. The whole subject must match (the pattern is anchored).
//
// Runs of white space in the pattern are collapsed to one space and the
// ends trimmed, because subjects are matched with their inter-word white
// space collapsed too.
type Glob struct {
	src string
	re  *regexp.Regexp
	lit literals
}

// literals are the pattern's literal runs, lower-cased, ASCII only. A
// subject that is all ASCII can only match if it starts with prefix, ends
// with suffix and contains every inner run; checking that first skips
// the regexp for most subjects. The regexp stays the only authority on a
// match: literals can only say "cannot match".
type literals struct {
	prefix, suffix string
	inner          []string
}

// CompileGlob compiles pattern. The error names the pattern and wraps
// ErrMalformedGlob.
func CompileGlob(pattern string) (*Glob, error) {
	norm := collapseSpace(pattern)
	if norm == "" {
		return nil, fmt.Errorf("glob %q: empty pattern: %w", pattern, ErrMalformedGlob)
	}
	expr, lit, err := translate(norm)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		// translate emits valid syntax except for what RE2 rejects inside
		// classes (inverted ranges): report it as the glob's fault, in
		// the glob's terms.
		msg := err.Error()
		if se, ok := errors.AsType[*syntax.Error](err); ok {
			msg = se.Code.String()
		}
		return nil, fmt.Errorf("glob %q: %s: %w", pattern, msg, ErrMalformedGlob)
	}
	return &Glob{src: pattern, re: re, lit: lit}, nil
}

// String returns the pattern as written.
func (g *Glob) String() string { return g.src }

// Match reports whether the whole of s matches the pattern. s is used
// as given; DenyRules.Match also tries the white-space-collapsed form.
func (g *Glob) Match(s string) bool { return g.match(newSubject(s)) }

func (g *Glob) match(s subject) bool {
	if s.ascii && !g.lit.mayMatch(s.lower) {
		return false
	}
	return g.re.MatchString(s.text)
}

// mayMatch is false when lower, an all-ASCII lower-cased subject, cannot
// match. Under (?i) an ASCII letter matches only its two ASCII cases in
// ASCII text (the Kelvin sign and the long s also fold to k and s, but
// they are not ASCII), so plain byte comparison is sound.
func (l *literals) mayMatch(lower string) bool {
	if !strings.HasPrefix(lower, l.prefix) || !strings.HasSuffix(lower, l.suffix) {
		return false
	}
	// prefix and suffix are different runs of the pattern, so in ASCII
	// text they cover different bytes.
	if len(l.prefix)+len(l.suffix) > len(lower) {
		return false
	}
	for _, in := range l.inner {
		if !strings.Contains(lower, in) {
			return false
		}
	}
	return true
}

// subject is a string to match and, when it is all ASCII, its lower-case
// form for the literal pre-filter.
type subject struct {
	text, lower string
	ascii       bool
}

func newSubject(s string) subject {
	if !isASCII(s) {
		return subject{text: s}
	}
	return subject{text: s, lower: strings.ToLower(s), ascii: true}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// translate turns a normalised glob into an anchored RE2 expression in a
// case-insensitive, dot-matches-newline group, and collects its literal
// runs. Translating rather than hand-writing a matcher keeps matching
// linear-time (RE2 does not backtrack), which matters because subjects
// are agent-controlled.
func translate(p string) (string, literals, error) {
	var (
		b    strings.Builder
		lit  literals
		runs []string // literal runs; "" marks a wildcard or class
	)
	b.WriteString(`\A(?is:`)
	start := 0 // start of the pending literal run
	flush := func(end int) {
		if end > start {
			b.WriteString(regexp.QuoteMeta(p[start:end]))
			runs = append(runs, p[start:end])
		}
	}
	for i := 0; i < len(p); {
		switch p[i] {
		case '*':
			flush(i)
			for i < len(p) && p[i] == '*' {
				i++
			}
			b.WriteString(`.*`)
			runs = append(runs, "")
			start = i
		case '?':
			flush(i)
			i++
			b.WriteString(`.`)
			runs = append(runs, "")
			start = i
		case '[':
			flush(i)
			class, next, err := translateClass(p, i)
			if err != nil {
				return "", literals{}, err
			}
			b.WriteString(class)
			runs = append(runs, "")
			i, start = next, next
		default:
			i++
		}
	}
	flush(len(p))
	b.WriteString(`)\z`)

	for k, r := range runs {
		switch {
		case r == "":
			// a wildcard or class
		case len(runs) == 1 && isASCII(r):
			// No wildcard at all: the subject must start with the run
			// (and the regexp checks it ends there).
			lit.prefix = strings.ToLower(r)
		case k == 0 && isASCII(r):
			lit.prefix = strings.ToLower(r)
		case k == len(runs)-1 && isASCII(r):
			lit.suffix = strings.ToLower(r)
		default:
			// A run with non-ASCII text can still only match its ASCII
			// pieces as they are, so each must appear somewhere.
			lit.inner = append(lit.inner, asciiPieces(strings.ToLower(r))...)
		}
	}
	return b.String(), lit, nil
}

// asciiPieces splits s at non-ASCII bytes and returns the ASCII runs.
func asciiPieces(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] < utf8.RuneSelf {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

// translateClass translates the class starting at p[start] == '[' and
// returns the index after its closing ']'. The rules follow Python's
// fnmatch (the reference): a leading '!' negates, a ']' right after the
// opening (or after '!') is literal, and '^' is an ordinary character.
// Unlike fnmatch, an unclosed '[' is an error rather than a literal, so
// a typo in a deny rule is reported instead of silently never matching.
func translateClass(p string, start int) (string, int, error) {
	j := start + 1
	negate := false
	if j < len(p) && p[j] == '!' {
		negate = true
		j++
	}
	bodyStart := j
	if j < len(p) && p[j] == ']' {
		j++
	}
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return "", 0, fmt.Errorf("unclosed [ at offset %d: %w", start, ErrMalformedGlob)
	}
	body := p[bodyStart:j]
	var b strings.Builder
	b.WriteByte('[')
	if negate {
		b.WriteByte('^')
	}
	for k := 0; k < len(body); k++ {
		switch c := body[k]; c {
		case '\\', '[', ']', '^':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(']')
	return b.String(), j + 1, nil
}

// collapseSpace trims s and replaces every run of white space with a
// single space.
func collapseSpace(s string) string {
	// Fast path: plain ASCII with single spaces only, not at the ends
	// (the common case for projections).
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c == ' ' && prevSpace) {
			return strings.Join(strings.Fields(s), " ")
		}
		prevSpace = c == ' '
	}
	if prevSpace && s != "" {
		return strings.Join(strings.Fields(s), " ")
	}
	return s
}
