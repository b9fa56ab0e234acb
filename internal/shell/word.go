package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords caps how many words one brace expansion may yield before
// the word is kept unexpanded.
const maxBraceWords = 64

// word resolves one word.
func (w *walker) word(word *syntax.Word) []Arg { return w.wordInto(nil, word) }

// wordInto resolves one word, appending its args to dst.
func (w *walker) wordInto(dst []Arg, word *syntax.Word) []Arg {
	if word == nil || len(word.Parts) == 0 {
		return dst
	}
	if len(word.Parts) == 1 {
		if lit, ok := word.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, `\\*?[{`) {
			return append(dst, Arg{Value: uncr(lit.Value, w.lvl.cr), Static: true, Span: w.span(lit.Pos(), lit.End()), off: int32(w.verbatimOffset(lit))})
		}
	}
	span := w.span(word.Pos(), word.End())
	if len(word.Parts) == 1 {
		if lit, ok := word.Parts[0].(*syntax.Lit); ok && lit.Value == "{}" {
			// find -exec's and xargs -I's {}: what SplitBraces makes of
			// it (the two braces as literals), without its allocations.
			first := len(dst)
			dst = w.resolve(dst, bracePair)
			for i := first; i < len(dst); i++ {
				dst[i].Span = span
			}
			return dst
		}
	}
	// syntax.SplitBraces rewrites the word it is given; split a copy so
	// the tree stays as parsed (a function body is walked again at every
	// call, and walkTree knows no BraceExp nodes).
	split := *word
	if syntax.SplitBraces(&split) {
		word := &split
		first := len(dst)
		if !slices.ContainsFunc(word.Parts, isBraceExp) {
			// Braces that expand to nothing ({} of find -exec): the one
			// word BracesSeq would yield has the same parts.
			dst = w.resolve(dst, word)
			for i := first; i < len(dst); i++ {
				dst[i].Span = span
			}
			return dst
		}
		out := dst
		n := 0
		for bw, err := range expand.BracesSeq(nil, word) {
			if err != nil || n >= maxBraceWords {
				n = 0
				break
			}
			n++
			n0 := len(out)
			out = w.resolve(out, bw)
			for i := n0; i < len(out); i++ {
				out[i].Span = span
			}
		}
		if n > 0 {
			return out
		}
		dst = dst[:first]
		// Too many or broken: keep the word as written, not static.
		return append(dst, Arg{Value: w.text(word.Pos(), word.End()), Span: span})
	}
	return w.resolve(dst, word)
}

// bracePair is the word syntax.SplitBraces makes of "{}": braces that
// expand to nothing, returned as two literals.
var bracePair = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "{"}, &syntax.Lit{Value: "}"}}}

// resolve turns a brace-free word into one or more args. Unquoted $IFS
// splits the word, as the shell would.
func (w *walker) resolve(dst []Arg, word *syntax.Word) []Arg {
	out := dst
	first := len(dst)
	b := &w.val
	b.Reset()
	cur := Arg{Static: true, Span: w.span(word.Pos(), word.End())}
	keepIFS := trailingDollar(word)
	for _, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			w.unquotedLit(b, &cur, p.Value)
		case *syntax.SglQuoted:
			b.add(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.add(unescapeDouble(q.Value))
					continue
				case *syntax.ParamExp:
					if v, ok := w.constant(q); ok {
						b.add(v)
						continue
					}
					if elems, ok := w.constantArray(q); ok {
						// "${a[@]}": one word per element.
						for i, e := range elems {
							if i > 0 {
								out = flushArg(out, b, &cur)
							}
							b.add(e)
						}
						continue
					}
				case *syntax.CmdSubst:
					if v, ok := w.foldSubst(q); ok {
						b.add(v)
						continue
					}
				}
				cur.Static = false
				b.add(w.shape(q))
			}
		case *syntax.ParamExp:
			if isIFS(p) && keepIFS {
				b.add(" \t\n") // not split: see trailingDollar
				continue
			}
			if isIFS(p) {
				out = flushArg(out, b, &cur)
				continue
			}
			if v, ok := w.constant(p); ok {
				out = splitInto(out, b, &cur, v)
				continue
			}
			if elems, ok := w.constantArray(p); ok {
				out = splitInto(out, b, &cur, strings.Join(elems, " "))
				continue
			}
			cur.Static = false
			b.add(w.shape(p))
		case *syntax.CmdSubst:
			if v, ok := w.foldSubst(p); ok {
				out = splitInto(out, b, &cur, v)
				continue
			}
			cur.Static = false
			b.add(w.shape(part))
		default: // ArithmExp, ProcSubst, ExtGlob
			cur.Static = false
			b.add(w.shape(part))
		}
	}
	out = flushArg(out, b, &cur)
	if w.lvl.cr != 0 {
		for i := first; i < len(out); i++ {
			out[i].Value = uncr(out[i].Value, w.lvl.cr)
		}
	}
	if len(out) == first+1 && len(word.Parts) == 1 && w.lvl.exact {
		out[first].off = int32(w.verbatimOffset(word.Parts[0]))
	}
	if len(out) == first {
		// A word of only $IFS expands to nothing; keep an empty arg so
		// argv positions stay honest.
		out = append(out, Arg{Static: true, Span: cur.Span})
	}
	return out
}

// splitInto appends the value of an unquoted expansion known statically:
// split into fields on blanks, as bash splits with the default IFS, each
// field a pattern if it holds pattern characters.
func splitInto(out []Arg, b *argText, cur *Arg, v string) []Arg {
	if v == "" {
		return out
	}
	if strings.IndexByte(" \t\n", v[0]) >= 0 {
		out = flushArg(out, b, cur)
	}
	for i, f := range strings.Fields(v) {
		if i > 0 {
			out = flushArg(out, b, cur)
		}
		if strings.ContainsAny(f, "*?[") {
			cur.Glob = true
		}
		b.add(f)
	}
	if strings.IndexByte(" \t\n", v[len(v)-1]) >= 0 {
		out = flushArg(out, b, cur)
	}
	return out
}

// unquotedLit appends an unquoted literal, removing backslash escapes and
// line continuations, and notes unescaped pattern characters.
func (w *walker) unquotedLit(b *argText, a *Arg, s string) {
	if !strings.ContainsAny(s, `\*?[`) {
		b.add(s)
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 == len(s) {
				b.addByte(c) // a trailing backslash stays literal
				continue
			}
			i++
			if s[i] != '\n' {
				b.addByte(s[i])
			}
			continue
		case '*', '?', '[':
			a.Glob = true
		}
		b.addByte(c)
	}
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// trailingDollar reports a word that ends in an unquoted, unescaped "$".
// bash keeps such a word whole: it does not split it on $IFS (a$IFS$ is
// the one word "a \t\n$"), so neither does the analysis.
func trailingDollar(word *syntax.Word) bool {
	lit, ok := word.Parts[len(word.Parts)-1].(*syntax.Lit)
	if !ok || !strings.HasSuffix(lit.Value, "$") {
		return false
	}
	bs := 0
	for i := len(lit.Value) - 2; i >= 0 && lit.Value[i] == '\\'; i-- {
		bs++
	}
	return bs%2 == 0
}

// isIFS reports an unquoted $IFS or ${IFS}, which splits words.
func isIFS(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "IFS" && !p.Excl && !p.Length &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil
}

// shape renders a dynamic word part for rules and people: a plain
// parameter is "$NAME" whichever way it was written, anything else is its
// source text.
func (w *walker) shape(part syntax.WordPart) string {
	if p, ok := part.(*syntax.ParamExp); ok && p.Param != nil && !p.Excl && !p.Length &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.NestedParam == nil {
		// Written as $NAME, the source text is the shape: no need to
		// build it.
		if t := w.text(p.Pos(), p.End()); len(t) == len(p.Param.Value)+1 && t[0] == '$' && t[1:] == p.Param.Value {
			return t
		}
		return "$" + p.Param.Value
	}
	return w.text(part.Pos(), part.End())
}

// hasDynamicParts reports whether a word contains anything the shell
// would expand at run time.
func hasDynamicParts(word *syntax.Word) bool {
	dyn := false
	walkTree(word, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			dyn = true
		}
		return !dyn
	})
	return dyn
}

// verbatimOffset returns 1 + the offset in Analysis.Input where the
// part's value appears unchanged, or 0.
func (w *walker) verbatimOffset(part syntax.WordPart) int {
	switch p := part.(type) {
	case *syntax.Lit:
		if !strings.Contains(p.Value, `\`) {
			return w.lvl.base + int(p.Pos().Offset()) + 1
		}
	case *syntax.SglQuoted:
		if !p.Dollar {
			return w.lvl.base + int(p.Left.Offset()) + 2
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			if lit, ok := p.Parts[0].(*syntax.Lit); ok && !strings.Contains(lit.Value, `\`) {
				return w.lvl.base + int(p.Left.Offset()) + 2
			}
		}
	}
	return 0
}

// flushArg ends the arg being built, if it has content.
func flushArg(out []Arg, b *argText, cur *Arg) []Arg {
	if b.Len() > 0 || !cur.Static {
		cur.Value = b.String()
		out = append(out, *cur)
	}
	b.Reset()
	*cur = Arg{Static: true, Span: cur.Span}
	return out
}

// isBraceExp reports a brace expansion part (see syntax.SplitBraces).
func isBraceExp(p syntax.WordPart) bool {
	_, ok := p.(*syntax.BraceExp)
	return ok
}

// argText assembles an arg's value like a strings.Builder, except that a
// value written as one piece is that piece: most words are a single
// literal or quoted string, and they then cost no allocation. Values of
// several pieces are assembled in a buffer the walker reuses.
type argText struct {
	one    string // the value so far, while it is a single piece
	buf    []byte // the value so far, once it is several
	pieces int    // 0, 1 (in one) or 2 (several, in buf)
}

func (t *argText) add(s string) {
	switch {
	case s == "":
	case t.pieces == 0:
		t.one, t.pieces = s, 1
	default:
		t.spill()
		t.buf = append(t.buf, s...)
	}
}

func (t *argText) addByte(c byte) {
	t.spill()
	t.buf = append(t.buf, c)
}

// spill moves the value into buf.
func (t *argText) spill() {
	switch t.pieces {
	case 0:
		t.buf = t.buf[:0]
	case 1:
		t.buf = append(t.buf[:0], t.one...)
		t.one = ""
	}
	t.pieces = 2
}

func (t *argText) Len() int {
	if t.pieces == 2 {
		return len(t.buf)
	}
	return len(t.one)
}

// String returns the value; it does not alias buf.
func (t *argText) String() string {
	if t.pieces == 2 {
		return string(t.buf)
	}
	return t.one
}

func (t *argText) Reset() { t.one, t.pieces = "", 0 }

// mayRun reports whether word parts hold a command or process
// substitution (or arithmetic, which may hold one), without the
// cost of a tree walk: most words have none.
func mayRun(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
			return true
		case *syntax.DblQuoted:
			if mayRun(p.Parts) {
				return true
			}
		case *syntax.ParamExp:
			if p.Index != nil || p.Slice != nil || p.NestedParam != nil {
				return true
			}
			if p.Exp != nil && p.Exp.Word != nil && (mayRun(p.Exp.Word.Parts) || promptOp(p)) {
				return true
			}
			if p.Repl != nil && (p.Repl.Orig != nil && mayRun(p.Repl.Orig.Parts) || p.Repl.With != nil && mayRun(p.Repl.With.Parts)) {
				return true
			}
		}
	}
	return false
}

// promptOp reports ${x@P}: the value is expanded as a prompt string,
// command substitutions included.
func promptOp(p *syntax.ParamExp) bool {
	return p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P"
}
