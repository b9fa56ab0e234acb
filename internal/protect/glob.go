package protect

import (
	"path"
	"strings"
	"sync"
	"unicode/utf8"
)

// A compiled path glob: a list of components, each either "**" (any
// number of names) or a name pattern. Name patterns follow path.Match:
// "*", "?", "[class]" ("[^…]" or "[!…]" negated, ranges) and "\x".
//
// Besides matching a concrete path, two globs can be intersected: is
// there a path both could match? That is how a shell glob target
// ("> ~/.ss?/auth*") is judged against the table without expanding it.

type comp struct {
	anyDepth bool
	toks     []tok
	// noDot is set on the names of a shell glob that cannot match a
	// hidden name (bash without dotglob: the name does not start with a
	// literal "."), and on its "**".
	noDot bool
	// lit is the name when toks are all literal characters.
	lit   string
	isLit bool
}

func nameComp(name string) comp {
	compiled.mu.RLock()
	c, ok := compiled.m[name]
	compiled.mu.RUnlock()
	if ok {
		return c
	}
	c = comp{toks: compileName(name)}
	c.lit, c.isLit = literalName(c.toks)
	compiled.mu.Lock()
	if len(compiled.m) >= maxCompiled {
		clear(compiled.m) // bounded: an input of many distinct names cannot grow it
	}
	if compiled.m == nil {
		compiled.m = map[string]comp{}
	}
	compiled.m[name] = c
	compiled.mu.Unlock()
	return c
}

// compiled caches compiled name patterns: the same few names (build,
// dist, *.pyc, the table's own) are compiled at every decision otherwise,
// and compiling was most of the garbage of matching a path. A compiled
// comp is never modified after it is built, so sharing it is safe.
var compiled struct {
	mu sync.RWMutex
	m  map[string]comp
}

// maxCompiled bounds the cache of compiled names.
const maxCompiled = 4096

// tok is one element of a name pattern: a star, or one character from
// a set.
type tok struct {
	star bool
	set  charSet
}

type charSet struct {
	any    bool
	lit    rune
	isLit  bool
	ranges []runeRange
	neg    bool
}

type runeRange struct{ lo, hi rune }

func (c charSet) has(r rune) bool {
	if c.any {
		return true
	}
	if c.isLit {
		return r == c.lit
	}
	in := false
	for _, rg := range c.ranges {
		if rg.lo <= r && r <= rg.hi {
			in = true
			break
		}
	}
	return in != c.neg
}

// points returns characters that represent every interval on which
// membership in c is constant: checking them decides whether two sets
// share a character.
func (c charSet) points(out []rune) []rune {
	switch {
	case c.any:
		return append(out, 'a')
	case c.isLit:
		return append(out, c.lit, c.lit-1, c.lit+1)
	}
	for _, rg := range c.ranges {
		out = append(out, rg.lo, rg.hi, rg.lo-1, rg.hi+1)
	}
	return append(out, 'a', 0x4e00)
}

// overlap reports whether two sets share a character other than "/"
// (and, with noDot, other than ".").
func overlap(a, b charSet, noDot bool) bool {
	if a.isLit {
		return b.has(a.lit) && !(noDot && a.lit == '.')
	}
	if b.isLit {
		return a.has(b.lit) && !(noDot && b.lit == '.')
	}
	var pts [24]rune
	cand := append(b.points(a.points(pts[:0])), '-', '0')
	for _, r := range cand {
		if r >= 0 && r != '/' && !(noDot && r == '.') && a.has(r) && b.has(r) {
			return true
		}
	}
	return false
}

// compilePattern compiles a path glob, lower-cased. One not starting
// with "/" gets a leading "**".
func compilePattern(p string) []comp {
	p = strings.ToLower(p)
	anchored := strings.HasPrefix(p, "/")
	p = path.Clean("/" + p)
	var out []comp
	if !anchored {
		out = append(out, comp{anyDepth: true})
	}
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if name == "" {
			continue
		}
		if name == "**" {
			if len(out) > 0 && out[len(out)-1].anyDepth {
				continue
			}
			out = append(out, comp{anyDepth: true})
			continue
		}
		out = append(out, nameComp(name))
	}
	return out
}

// compileGlob appends a shell glob, lower-cased, compiled as given to
// out: a relative one stays relative.
func compileGlob(out []comp, g string, dotglob bool) []comp {
	g = strings.ToLower(g)
	if g == "" {
		return out
	}
	g = path.Clean(g)
	for name := range strings.SplitSeq(strings.Trim(g, "/"), "/") {
		if name == "" || name == "." {
			continue
		}
		if name == "**" {
			out = append(out, comp{anyDepth: true, noDot: !dotglob})
			continue
		}
		c := nameComp(name)
		if !dotglob && !(len(c.toks) > 0 && c.toks[0].set.isLit && c.toks[0].set.lit == '.') {
			c.noDot = true
		}
		out = append(out, c)
	}
	return out
}

// compileName compiles one name pattern. A malformed class ("[a")
// makes the whole name a star: it could match anything, which is the
// safe reading for a pattern and for a glob alike.
func compileName(s string) []tok {
	var out []tok
	for i := 0; i < len(s); {
		switch s[i] {
		case '*':
			if len(out) == 0 || !out[len(out)-1].star {
				out = append(out, tok{star: true})
			}
			i++
		case '?':
			out = append(out, tok{set: charSet{any: true}})
			i++
		case '[':
			set, n, ok := compileClass(s[i+1:])
			if !ok {
				return []tok{{star: true}}
			}
			out = append(out, tok{set: set})
			i += 1 + n
		case '\\':
			if i+1 >= len(s) {
				return []tok{{star: true}}
			}
			r, w := utf8.DecodeRuneInString(s[i+1:])
			out = append(out, tok{set: charSet{isLit: true, lit: r}})
			i += 1 + w
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			out = append(out, tok{set: charSet{isLit: true, lit: r}})
			i += w
		}
	}
	return out
}

// compileClass reads a class after its "[" and returns the bytes used,
// including the closing "]".
func compileClass(s string) (charSet, int, bool) {
	var c charSet
	i := 0
	if i < len(s) && (s[i] == '^' || s[i] == '!') {
		c.neg = true
		i++
	}
	readChar := func() (rune, bool) {
		if i >= len(s) {
			return 0, false
		}
		if s[i] == '\\' {
			i++
			if i >= len(s) {
				return 0, false
			}
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		return r, true
	}
	first := true
	for {
		if i >= len(s) {
			return c, 0, false
		}
		if s[i] == ']' && !first {
			i++
			return c, i, true
		}
		first = false
		lo, ok := readChar()
		if !ok {
			return c, 0, false
		}
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			i++
			if hi, ok = readChar(); !ok {
				return c, 0, false
			}
		}
		if hi < lo {
			return c, 0, false
		}
		c.ranges = append(c.ranges, runeRange{lo, hi})
	}
}

// matchName reports whether name matches the tokens.
func matchName(toks []tok, name string) bool {
	// Iterative glob match with one backtrack point (the last star).
	ti, ni := 0, 0
	starT, starN := -1, 0
	for ni < len(name) {
		r, w := utf8.DecodeRuneInString(name[ni:])
		if ti < len(toks) {
			t := toks[ti]
			if t.star {
				starT, starN = ti, ni
				ti++
				continue
			}
			if t.set.has(r) {
				ti++
				ni += w
				continue
			}
		}
		if starT < 0 {
			return false
		}
		_, w = utf8.DecodeRuneInString(name[starN:])
		starN += w
		ti, ni = starT+1, starN
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
}

// matchNames reports whether the names of a path match a pattern.
func matchNames(p []comp, names []string) bool {
	for len(p) > 0 {
		if p[0].anyDepth {
			if !anyDepth(p[1:]) {
				// The rest matches a fixed number of names: the last ones.
				k := len(names) - (len(p) - 1)
				return k >= 0 && matchNames(p[1:], names[k:])
			}
			for k := 0; k <= len(names); k++ {
				if matchNames(p[1:], names[k:]) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 || !matchName(p[0].toks, names[0]) {
			return false
		}
		p, names = p[1:], names[1:]
	}
	return len(names) == 0
}

func anyDepth(p []comp) bool {
	for _, c := range p {
		if c.anyDepth {
			return true
		}
	}
	return false
}

// intersects reports whether some path matches both patterns. With
// deep, b's "**" may stand for names a spells out; without it, it
// stands only for names a leaves open (its own "**" or wildcards): a
// glob that searches everywhere below a directory is not taken to name
// every protected directory that could sit there.
func intersects(a, b []comp, deep bool) bool {
	w := len(b) + 1
	var small [256]bool
	seen := small[:]
	if n := (len(a) + 1) * w; n > len(small) {
		seen = make([]bool, n)
	}
	var visit func(i, j int) bool
	visit = func(i, j int) bool {
		if seen[i*w+j] {
			return false
		}
		seen[i*w+j] = true
		if i == len(a) && j == len(b) {
			return true
		}
		if i < len(a) && a[i].anyDepth {
			if visit(i+1, j) || (j < len(b) && !b[j].anyDepth && visit(i, j+1)) {
				return true
			}
		}
		if j < len(b) && b[j].anyDepth {
			if visit(i, j+1) || (i < len(a) && !a[i].anyDepth && (deep || !a[i].isLit) && (!b[j].noDot || compsIntersect(a[i], starComp, true)) && visit(i+1, j)) {
				return true
			}
		}
		if i < len(a) && j < len(b) && !a[i].anyDepth && !b[j].anyDepth && compsIntersect(a[i], b[j], b[j].noDot) {
			return visit(i+1, j+1)
		}
		return false
	}
	return visit(0, 0)
}

var starComp = comp{toks: []tok{{star: true}}}

// compsIntersect reports whether some name matches both name comps;
// with noDot, a name not starting with ".". A literal side is matched
// directly.
func compsIntersect(a, b comp, noDot bool) bool {
	switch {
	case a.isLit:
		return !(noDot && strings.HasPrefix(a.lit, ".")) && matchName(b.toks, a.lit)
	case b.isLit:
		return !(noDot && strings.HasPrefix(b.lit, ".")) && matchName(a.toks, b.lit)
	}
	return namesIntersect(a.toks, b.toks, noDot)
}

// namesIntersect reports whether some non-empty name matches both name
// patterns; with noDot, one that does not start with ".".
func namesIntersect(a, b []tok, noDot bool) bool {
	w := len(b) + 1
	var small [512]bool
	seen := small[:]
	if n := 2 * (len(a) + 1) * w; n > len(small) {
		seen = make([]bool, n)
	}
	var visit func(i, j int, consumed bool) bool
	visit = func(i, j int, consumed bool) bool {
		k := 2 * (i*w + j)
		if consumed {
			k++
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		if i == len(a) && j == len(b) && consumed {
			return true
		}
		// Stars may match nothing.
		if i < len(a) && a[i].star && visit(i+1, j, consumed) {
			return true
		}
		if j < len(b) && b[j].star && visit(i, j+1, consumed) {
			return true
		}
		if i == len(a) || j == len(b) {
			return false
		}
		// The first character of the name may not be a dot under noDot.
		nd := noDot && !consumed
		switch {
		case a[i].star && b[j].star:
			// Both stars take one character and stay.
			return visit(i, j, true)
		case a[i].star:
			return overlap(charSet{any: true}, b[j].set, nd) && visit(i, j+1, true)
		case b[j].star:
			return overlap(a[i].set, charSet{any: true}, nd) && visit(i+1, j, true)
		}
		return overlap(a[i].set, b[j].set, nd) && visit(i+1, j+1, true)
	}
	return visit(0, 0, false)
}

func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasMeta reports unescaped pattern characters.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}
