package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Constant propagation within one text: `cmd=shred; $cmd -n1 /dev/sda`
// runs shred, and `d=/tmp/build; rm -rf $d` deletes under /tmp. A variable
// is a constant only when there is no doubt: it is assigned exactly once
// in the whole text, at the top level (not in a branch, a loop, a
// function or a subshell, not only for one command), to a static value;
// no other word of the text names it (read, unset, declare, for, printf
// -v …); IFS is never set; and the use comes after the assignment. Any
// other variable stays dynamic.

// constVal is a constant's value and where it became set.
type constVal struct {
	value string
	after int // offset after which uses see the value
	// until, when set, is the offset of a statement that could change
	// the value where the walk cannot see it (source, eval, a function
	// of the line): uses from there on do not see it.
	until int
	// elems are an array's elements (a=(x y z)), when array is set.
	elems []string
	array bool
	// export: the variable is in the environment of the commands run
	// after offset exportAt (export H=~, or H=~; export H).
	export   bool
	exportAt int
}

// visible reports whether a use at offset off sees the value.
func (c constVal) visible(off int) bool { return off >= c.after }

// seen returns whether a use of c at p sees its value. A use after a
// barrier (until) still judges the value it had, since it may well
// still have it, and is opaque besides: it could be anything now
// (H=~; source ./x; rm -rf $H is both a delete of the home and of an
// unknown path), so no bypass allows it.
func (w *walker) seen(c constVal, p syntax.Node) bool {
	off := int(p.Pos().Offset())
	if !c.visible(off) {
		return false
	}
	if c.until != 0 && off >= c.until {
		w.a.Dynamic = true
		w.findDetail(-1, clsDynamic, w.span(p.Pos(), p.End()), "a value set before source, eval or a function call that could change it")
	}
	return true
}

// barriers are the offsets of the statements of f that can change any
// variable where the walk does not look: source and ., eval (also
// behind builtin or command), and calls of the line's own functions
// that do either (or call another of them).
func barriers(f *syntax.File) []int {
	funcs := map[string]*syntax.FuncDecl{}
	walkTree(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			funcs[fd.Name.Value] = fd
		}
		return true
	})
	called := func(ce *syntax.CallExpr) string {
		if len(ce.Args) == 0 {
			return ""
		}
		name := ce.Args[0].Lit()
		if (name == "builtin" || name == "command") && len(ce.Args) > 1 {
			name = ce.Args[1].Lit()
		}
		return name
	}
	risky := map[string]bool{}
	for name, fd := range funcs {
		walkTree(fd.Body, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok {
				c := called(ce)
				risky[name] = risky[name] || c == "source" || c == "." || c == "eval" || funcs[c] != nil
			}
			return !risky[name]
		})
	}
	var out []int
	walkTree(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok {
			if c := called(ce); c == "source" || c == "." || c == "eval" || risky[c] {
				out = append(out, int(ce.End().Offset())) // its own words see the value
			}
		}
		return true
	})
	return out
}

// fence sets each constant's until: the first barrier after it is set.
func fence(consts map[string]constVal, bars []int) {
	for k, c := range consts {
		for _, b := range bars {
			if b >= c.after && (c.until == 0 || b < c.until) {
				c.until = b
			}
		}
		consts[k] = c
	}
}

// constants finds the constants of a parsed text.
func (w *walker) constants(f *syntax.File) map[string]constVal {
	if !mayHaveConstants(f) {
		return nil
	}
	assigned := map[string]int{}
	named := map[string]bool{}
	ifs := false
	walkTree(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			// declare H or local H (no value) can make a new, empty
			// variable in a function; export H and readonly H keep
			// the value.
			if n.Variant.Value != "export" && n.Variant.Value != "readonly" {
				for _, as := range n.Args {
					if as.Naked && as.Name != nil {
						named[as.Name.Value] = true
					}
				}
			}
		case *syntax.Assign:
			if n.Name != nil && !n.Naked {
				assigned[n.Name.Value]++
				if n.Name.Value == "IFS" {
					ifs = true
				}
			}
		case *syntax.WordIter:
			named[n.Name.Value] = true
		case *syntax.CallExpr:
			if name, ok := readHere(n); ok {
				assigned[name]++
				return true
			}
			for _, a := range n.Args[min(1, len(n.Args)):] {
				if lit := a.Lit(); lit != "" {
					name, _, _ := strings.Cut(lit, "=")
					name, _, _ = strings.Cut(name, "[")
					named[name] = true
				}
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			// (( x = 1 )), $((x++)) assign inside arithmetic.
			walkTree(n, func(m syntax.Node) bool {
				if b, ok := m.(*syntax.BinaryArithm); ok && b.Op >= syntax.Assgn && b.Op <= syntax.ShrAssgn {
					if word, ok := b.X.(*syntax.Word); ok {
						named[word.Lit()] = true
					}
				}
				if u, ok := m.(*syntax.UnaryArithm); ok && (u.Op == syntax.Inc || u.Op == syntax.Dec) {
					if word, ok := u.X.(*syntax.Word); ok {
						named[word.Lit()] = true
					}
				}
				return true
			})
		}
		return true
	})
	if ifs {
		return nil
	}
	var out map[string]constVal
	for _, st := range f.Stmts {
		if st.Background || st.Negated || st.Coprocess {
			continue
		}
		var list []*syntax.Assign
		export := false
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			if name, ok := readHere(c); ok && assigned[name] == 1 && !named[name] && len(st.Redirs) == 1 &&
				st.Redirs[0].Op == syntax.WordHdoc && st.Redirs[0].N == nil {
				word := st.Redirs[0].Word
				// read NAME <<< WORD: the word's value, when it holds
				// nothing read would split, trim or unescape.
				if v, ok := assignedWord(word); ok && !strings.ContainsAny(v, " \t\n\\") {
					if out == nil {
						out = map[string]constVal{}
					}
					out[name] = constVal{value: uncr(v, w.lvl.cr), after: int(st.End().Offset())}
				}
				continue
			}
			if len(c.Args) != 0 {
				continue
			}
			list = c.Assigns
		case *syntax.DeclClause:
			if c.Variant.Value != "export" && c.Variant.Value != "readonly" && c.Variant.Value != "declare" && c.Variant.Value != "typeset" {
				continue
			}
			list = c.Args
			export = exportsAll(c)
		default:
			continue
		}
		for _, as := range list {
			if export && as.Naked && as.Name != nil {
				// export H after H=~: exported from here on.
				if cv, ok := out[as.Name.Value]; ok && !cv.export {
					cv.export, cv.exportAt = true, int(st.End().Offset())
					out[as.Name.Value] = cv
				}
				continue
			}
			if as.Name == nil || as.Naked || as.Append || as.Index != nil {
				continue
			}
			name := as.Name.Value
			if assigned[name] != 1 || named[name] {
				continue
			}
			cv := constVal{after: int(st.End().Offset())}
			if as.Array != nil {
				cv.array = true
				for _, e := range as.Array.Elems {
					v, ok := assignedWord(e.Value)
					if e.Index != nil || !ok {
						cv.array = false
						break
					}
					cv.elems = append(cv.elems, uncr(v, w.lvl.cr))
				}
				if !cv.array {
					continue
				}
				if len(cv.elems) > 0 {
					cv.value = cv.elems[0]
				}
			} else {
				val, ok := assignedWord(as.Value)
				if !ok {
					continue
				}
				cv.value = uncr(val, w.lvl.cr)
			}
			cv.export, cv.exportAt = export, cv.after
			if out == nil {
				out = map[string]constVal{}
			}
			out[name] = cv
		}
	}
	return out
}

// readHere matches `read [-r] NAME` (its input, a here-string or
// anything else, is the statement's): the name read.
func readHere(c *syntax.CallExpr) (string, bool) {
	if len(c.Assigns) != 0 || len(c.Args) < 2 || len(c.Args) > 3 || c.Args[0].Lit() != "read" {
		return "", false
	}
	name := c.Args[len(c.Args)-1].Lit()
	if len(c.Args) == 3 && c.Args[1].Lit() != "-r" || !validName(name) {
		return "", false
	}
	return name, true
}

// exportsAll reports a declaration that exports what it names: export,
// or declare/typeset with -x (and no +x).
func exportsAll(d *syntax.DeclClause) bool {
	if d.Variant.Value == "export" {
		return true
	}
	if d.Variant.Value != "declare" && d.Variant.Value != "typeset" {
		return false
	}
	x := false
	for _, as := range d.Args {
		if !as.Naked || as.Value == nil {
			continue
		}
		if opt := as.Value.Lit(); len(opt) > 1 && opt[0] == '-' && strings.ContainsRune(opt, 'x') {
			x = true
		} else if len(opt) > 1 && opt[0] == '+' && strings.ContainsRune(opt, 'x') {
			return false
		}
	}
	return x
}

// mayHaveConstants is a quick test: an assignment statement (or a
// read) at the top level.
func mayHaveConstants(f *syntax.File) bool {
	for _, st := range f.Stmts {
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Args) == 0 && len(c.Assigns) > 0 {
				return true
			}
			if _, ok := readHere(c); ok {
				return true
			}
		case *syntax.DeclClause:
			return true
		}
	}
	return false
}

// assignedWord is staticWord for the value of an assignment, where bash
// also expands a leading tilde (f=~/x): the value keeps "~" as written,
// which the path rules resolve to the home.
func assignedWord(word *syntax.Word) (string, bool) {
	if word == nil || len(word.Parts) == 0 {
		return staticWord(word)
	}
	lit, ok := word.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(lit.Value, "~") {
		return staticWord(word)
	}
	prefix, rest, slash := strings.Cut(lit.Value, "/")
	for _, r := range prefix[1:] {
		if r != '.' && r != '_' && r != '-' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return "", false
		}
	}
	if slash {
		rest = "/" + rest
	}
	w := *word
	w.Parts = append([]syntax.WordPart{&syntax.Lit{Value: rest}}, word.Parts[1:]...)
	v, ok := staticWord(&w)
	if !ok {
		return "", false
	}
	return prefix + v, true
}

// staticWord returns the value of a word without expansions (quotes
// removed), or false.
func staticWord(word *syntax.Word) (string, bool) {
	if word == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `\*?[~{`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// constant returns the value of a plain parameter expansion ($NAME,
// ${NAME}, $1) of a constant, at the place it is used.
func (w *walker) constant(p *syntax.ParamExp) (string, bool) {
	if len(w.lvl.consts) == 0 || p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.NestedParam != nil || p.Param.Value == "@" || p.Param.Value == "*" {
		return "", false
	}
	c, ok := w.lvl.consts[p.Param.Value]
	if !ok || !w.seen(c, p) {
		return "", false
	}
	return c.value, true
}

// constantArray returns the elements of ${a[@]} or ${a[*]} for a
// constant array a.
func (w *walker) constantArray(p *syntax.ParamExp) ([]string, bool) {
	if len(w.lvl.consts) == 0 || p.Param == nil || p.Excl || p.Length || p.Width || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.NestedParam != nil {
		return nil, false
	}
	if p.Index == nil && p.Param.Value == "@" {
		// "$@": the positional parameters, one word each.
		c, ok := w.lvl.consts["@"]
		if !ok || !w.seen(c, p) {
			return nil, false
		}
		return c.elems, true
	}
	if p.Index == nil {
		return nil, false
	}
	idx, ok := p.Index.(*syntax.Word)
	if !ok || idx.Lit() != "@" && idx.Lit() != "*" {
		return nil, false
	}
	c, ok := w.lvl.consts[p.Param.Value]
	if !ok || !c.array || !w.seen(c, p) {
		return nil, false
	}
	return c.elems, true
}

// foldSubst returns the output of a command substitution whose text can
// be computed ($(printf 'mk%s' fs), $(base64 -d <<< …), see foldStmts),
// without its trailing newlines, as bash substitutes it.
func (w *walker) foldSubst(cs *syntax.CmdSubst) (string, bool) {
	out, ok := w.foldStmts(cs.Stmts)
	return strings.TrimRight(out, "\n"), ok
}

// arithSubscripts: a static value holding a command substitution inside
// an array subscript runs it wherever bash evaluates the value as
// arithmetic (v='a[$(reboot)]'; echo $((v)); [[ $v -eq 1 ]]; declare
// -i; printf -v). The substitution is judged as if it ran.
func (w *walker) arithSubscripts(val string, via []string) {
	if !strings.Contains(val, "[") || !strings.Contains(val, "$(") && !strings.Contains(val, "`") {
		return
	}
	// Read as a word of a command (": VALUE"), where its substitutions
	// are plain syntax.
	text := ": " + val
	f, err := parse(text)
	if err != nil {
		return
	}
	saved := w.lvl
	w.lvl = &level{src: text, outer: saved.outer}
	if saved.exact {
		w.lvl.outer = Span{0, len(w.a.Input)}
	}
	walkTree(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, appendVia(via, "arithmetic subscript"), stdin{})
			return false
		}
		return w.err == nil
	})
	w.lvl = saved
}

// withPositional returns consts with the positional parameters of a
// shell or function set: $0 (when known) and $1…, "$@" and $#.
func withPositional(consts map[string]constVal, zero string, params []string) map[string]constVal {
	out := make(map[string]constVal, len(consts)+len(params)+3)
	for k, v := range consts {
		out[k] = v
	}
	if zero != "" {
		out["0"] = constVal{value: zero}
	}
	for i, p := range params {
		out[strconv.Itoa(i+1)] = constVal{value: p}
	}
	out["@"] = constVal{array: true, elems: params}
	out["#"] = constVal{value: strconv.Itoa(len(params))}
	return out
}

// setsPositional reports whether a text may change its positional
// parameters (shift, set, getopts) or read them as a whole in ways the
// constants do not follow.
func setsPositional(n syntax.Node) bool {
	found := false
	walkTree(n, func(m syntax.Node) bool {
		if ce, ok := m.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			switch ce.Args[0].Lit() {
			case "shift", "set", "getopts", "source", ".":
				found = true
			}
		}
		return !found
	})
	return found
}

// usesPositional reports whether a text expands a positional parameter.
func usesPositional(n syntax.Node) bool {
	found := false
	walkTree(n, func(m syntax.Node) bool {
		if pe, ok := m.(*syntax.ParamExp); ok && pe.Param != nil {
			if v := pe.Param.Value; v == "@" || v == "*" || v == "#" || isDigits(v) {
				found = true
			}
		}
		return !found
	})
	return found
}

// topPositional reads a top-level `set -- ARGS` (static, the only change
// of the positional parameters in the text) into consts.
func topPositional(f *syntax.File, consts map[string]constVal) map[string]constVal {
	var set *syntax.Stmt
	sets := 0
	walkTree(f, func(m syntax.Node) bool {
		if ce, ok := m.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			switch ce.Args[0].Lit() {
			case "shift", "getopts":
				sets += 2
			case "set":
				sets++
			}
		}
		return sets < 2
	})
	if sets != 1 {
		return consts
	}
	for _, st := range f.Stmts {
		if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Args) >= 2 && ce.Args[0].Lit() == "set" && ce.Args[1].Lit() == "--" &&
			!st.Background && len(ce.Assigns) == 0 {
			set = st
		}
	}
	if set == nil {
		return consts
	}
	var params []string
	for _, a := range set.Cmd.(*syntax.CallExpr).Args[2:] {
		v, ok := staticWord(a)
		if !ok {
			return consts
		}
		params = append(params, v)
	}
	out := withPositional(consts, "", params)
	after := int(set.End().Offset())
	for k, v := range out {
		if _, old := consts[k]; !old {
			v.after = after
			out[k] = v
		}
	}
	return out
}
