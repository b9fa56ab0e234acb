package codescan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A recursive-descent parser of Python statements and expressions into
// a small tree. It knows the grammar of current Python except match
// statements and type parameter syntax; what it does not know is an
// error.

type pnode struct {
	op    string // name num str fstr attr call sub list tuple set dict bin un cmp bool ifexp lambda comp star dstar kw slice const walrus await yield
	s     string
	n     int64
	isNum bool
	val   *value
	raw   string // fstr body
	kids  []*pnode
	keys  []*pnode // dict keys (nil for **spread)
	names []string // lambda params, comprehension targets
	line  int
}

type pstmt struct {
	op      string // expr assign aug import from def class block return
	targets []*pnode
	value   *pnode
	exprs   []*pnode
	imports [][2]string // name, alias
	module  string
	star    bool
	name    string
	params  []string
	body    []*pstmt
	line    int
}

type pyParser struct {
	toks []ptok
	i    int
	deep int
}

var errDepth = errors.New("nesting too deep")

func parsePython(src string) ([]*pstmt, error) {
	toks, err := lexPython(src)
	if err != nil {
		return nil, err
	}
	p := &pyParser{toks: toks}
	return p.statements(ptEOF)
}

// statements reads statements, passing over blank lines, up to a token
// of kind end or the end of the input.
func (p *pyParser) statements(end ptokKind) ([]*pstmt, error) {
	var out []*pstmt
	for k := p.peek().k; k != end && k != ptEOF; k = p.peek().k {
		if k == ptNewline {
			p.i++
			continue
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, st...)
	}
	return out, nil
}

func (p *pyParser) peek() ptok { return p.toks[p.i] }
func (p *pyParser) next() ptok {
	t := p.toks[p.i]
	if t.k != ptEOF {
		p.i++
	}
	return t
}
func (p *pyParser) isOp(s string) bool {
	t := p.peek()
	return t.k == ptOp && t.s == s
}
func (p *pyParser) isName(s string) bool {
	t := p.peek()
	return t.k == ptName && t.s == s
}
func (p *pyParser) accept(s string) bool {
	if p.isOp(s) || p.isName(s) {
		p.i++
		return true
	}
	return false
}
func (p *pyParser) expect(s string) error {
	if !p.accept(s) {
		return p.errf("expected %q", s)
	}
	return nil
}
func (p *pyParser) errf(format string, args ...any) error {
	t := p.peek()
	what := t.s
	switch t.k {
	case ptEOF:
		what = "end of input"
	case ptNewline:
		what = "end of line"
	case ptIndent, ptDedent:
		what = "indentation"
	case ptStr:
		what = "string"
	}
	return fmt.Errorf("line %d: %s (at %s)", t.line, fmt.Sprintf(format, args...), what)
}

var compoundKw = map[string]bool{"if": true, "while": true, "for": true, "try": true, "with": true, "def": true, "class": true, "async": true, "elif": true, "else": true, "except": true, "finally": true}

// statement parses one line's statements or one compound statement.
func (p *pyParser) statement() ([]*pstmt, error) {
	p.deep++
	defer func() { p.deep-- }()
	if p.deep > 200 {
		return nil, errDepth
	}
	t := p.peek()
	if t.k == ptOp && t.s == "@" {
		var decos []*pnode
		for p.accept("@") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			decos = append(decos, e)
			if p.peek().k != ptNewline {
				return nil, p.errf("expected end of line after a decorator")
			}
			p.skipNewlines()
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		return append([]*pstmt{{op: "expr", exprs: decos, line: t.line}}, st...), nil
	}
	if t.k == ptName && compoundKw[t.s] {
		if t.s == "match" {
			return nil, p.errf("match statements are not read")
		}
		st, err := p.compound()
		if err != nil {
			return nil, err
		}
		return []*pstmt{st}, nil
	}
	var out []*pstmt
	for {
		st, err := p.simple()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
		if p.accept(";") {
			if p.peek().k == ptNewline || p.peek().k == ptEOF {
				break
			}
			continue
		}
		break
	}
	switch p.peek().k {
	case ptNewline:
		p.i++
	case ptEOF, ptDedent:
	default:
		return nil, p.errf("unexpected token")
	}
	return out, nil
}

func (p *pyParser) skipNewlines() {
	for p.peek().k == ptNewline {
		p.i++
	}
}

// block parses ": suite".
func (p *pyParser) block() ([]*pstmt, error) {
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	if p.peek().k != ptNewline {
		return p.statement()
	}
	p.i++
	p.skipNewlines()
	if p.peek().k != ptIndent {
		return nil, p.errf("expected an indented block")
	}
	p.i++
	out, err := p.statements(ptDedent)
	if err != nil {
		return nil, err
	}
	if p.peek().k == ptDedent {
		p.i++
	}
	return out, nil
}

func (p *pyParser) compound() (*pstmt, error) {
	line := p.peek().line
	kw := p.next().s
	if kw == "async" {
		if !(p.isName("def") || p.isName("for") || p.isName("with")) {
			return nil, p.errf("expected def, for or with after async")
		}
		kw = p.next().s
	}
	st := &pstmt{op: "block", line: line}
	switch kw {
	case "if", "elif", "while":
		e, err := p.namedExpr()
		if err != nil {
			return nil, err
		}
		st.exprs = append(st.exprs, e)
	case "else", "try", "finally":
	case "except":
		p.accept("*")
		if !p.isOp(":") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			st.exprs = append(st.exprs, e)
			if p.accept("as") {
				n := p.next()
				if n.k != ptName {
					return nil, p.errf("expected a name after as")
				}
				st.targets = append(st.targets, &pnode{op: "name", s: n.s})
			}
		}
	case "for":
		tg, e, err := p.sides(p.targetList, "in", p.exprList)
		if err != nil {
			return nil, err
		}
		st.targets, st.exprs = []*pnode{tg}, []*pnode{e}
	case "with":
		paren := p.isOp("(") && p.withParens()
		if paren {
			p.i++
		}
		for {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			st.exprs = append(st.exprs, e)
			var tg *pnode
			if p.accept("as") {
				if tg, err = p.target(); err != nil {
					return nil, err
				}
			}
			st.targets = append(st.targets, tg)
			if !p.accept(",") {
				break
			}
			if paren && p.isOp(")") {
				break
			}
		}
		if paren {
			if err := p.expect(")"); err != nil {
				return nil, err
			}
		}
	case "def":
		n := p.next()
		if n.k != ptName {
			return nil, p.errf("expected a function name")
		}
		st.op, st.name = "def", n.s
		if p.isOp("[") {
			return nil, p.errf("type parameters are not read")
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		params, defaults, err := p.params(")")
		if err != nil {
			return nil, err
		}
		st.params, st.exprs = params, defaults
		if p.accept("->") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			st.exprs = append(st.exprs, e)
		}
	case "class":
		n := p.next()
		if n.k != ptName {
			return nil, p.errf("expected a class name")
		}
		st.op, st.name = "class", n.s
		if p.accept("(") {
			args, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			st.exprs = args
		}
	}
	body, err := p.block()
	if err != nil {
		return nil, err
	}
	st.body = body
	return st, nil
}

// withParens tells "with (a as b, c):" from "with (a, b) as c:" by
// looking for "as" inside the brackets.
func (p *pyParser) withParens() bool {
	depth := 0
	for j := p.i; j < len(p.toks); j++ {
		t := p.toks[j]
		if t.k == ptOp {
			switch t.s {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
				if depth == 0 {
					return j+1 < len(p.toks) && p.toks[j+1].k == ptOp && p.toks[j+1].s == ":"
				}
			}
		}
		if depth == 1 && t.k == ptName && t.s == "as" {
			return true
		}
	}
	return false
}

// params reads a parameter list up to close; it returns the names and
// the default and annotation expressions.
func (p *pyParser) params(close string) ([]string, []*pnode, error) {
	var names []string
	var exprs []*pnode
	for !p.accept(close) {
		if p.accept("*") || p.accept("**") || p.accept("/") {
			if p.isOp(",") || p.isOp(close) {
				p.accept(",")
				continue
			}
		}
		n := p.next()
		if n.k != ptName {
			return nil, nil, p.errf("expected a parameter name")
		}
		names = append(names, n.s)
		if close == ")" && p.accept(":") {
			e, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			exprs = append(exprs, e)
		}
		if p.accept("=") {
			e, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			exprs = append(exprs, e)
		}
		if !p.accept(",") {
			if err := p.expect(close); err != nil {
				return nil, nil, err
			}
			break
		}
	}
	return names, exprs, nil
}

func (p *pyParser) simple() (*pstmt, error) {
	t := p.peek()
	line := t.line
	if t.k == ptName {
		switch t.s {
		case "pass", "break", "continue":
			p.i++
			return &pstmt{op: "expr", line: line}, nil
		case "global", "nonlocal":
			p.i++
			for {
				if p.next().k != ptName {
					return nil, p.errf("expected a name")
				}
				if !p.accept(",") {
					break
				}
			}
			return &pstmt{op: "expr", line: line}, nil
		case "import":
			p.i++
			st := &pstmt{op: "import", line: line}
			for {
				name, err := p.dotted()
				if err != nil {
					return nil, err
				}
				alias := ""
				if p.accept("as") {
					a := p.next()
					if a.k != ptName {
						return nil, p.errf("expected a name after as")
					}
					alias = a.s
				}
				st.imports = append(st.imports, [2]string{name, alias})
				if !p.accept(",") {
					break
				}
			}
			return st, nil
		case "from":
			p.i++
			st := &pstmt{op: "from", line: line}
			dots := ""
			for p.isOp(".") || p.isOp("...") {
				dots += p.next().s
			}
			if !p.isName("import") {
				name, err := p.dotted()
				if err != nil {
					return nil, err
				}
				st.module = dots + name
			} else {
				st.module = dots
			}
			if err := p.expect("import"); err != nil {
				return nil, err
			}
			if p.accept("*") {
				st.star = true
				return st, nil
			}
			paren := p.accept("(")
			for {
				if paren && p.isOp(")") {
					break
				}
				n := p.next()
				if n.k != ptName {
					return nil, p.errf("expected a name to import")
				}
				alias := ""
				if p.accept("as") {
					a := p.next()
					if a.k != ptName {
						return nil, p.errf("expected a name after as")
					}
					alias = a.s
				}
				st.imports = append(st.imports, [2]string{n.s, alias})
				if !p.accept(",") {
					break
				}
			}
			if paren {
				if err := p.expect(")"); err != nil {
					return nil, err
				}
			}
			return st, nil
		case "return", "del", "assert":
			return p.keywordStmt(line, p.exprList)
		case "raise":
			st, err := p.keywordStmt(line, p.expr)
			if err != nil {
				return nil, err
			}
			if p.accept("from") {
				f, err := p.expr()
				if err != nil {
					return nil, err
				}
				st.exprs = append(st.exprs, f)
			}
			return st, nil
		case "type":
			if p.i+1 < len(p.toks) && p.toks[p.i+1].k == ptName {
				return nil, p.errf("type statements are not read")
			}
		}
	}
	// Expression, assignment, augmented or annotated assignment.
	first, err := p.exprListStar()
	if err != nil {
		return nil, err
	}
	if p.peek().k == ptOp {
		switch o := p.peek().s; o {
		case "=":
			st := &pstmt{op: "assign", line: line, targets: []*pnode{first}}
			for p.accept("=") {
				e, err := p.exprListStar()
				if err != nil {
					return nil, err
				}
				st.targets = append(st.targets, e)
			}
			st.value = st.targets[len(st.targets)-1]
			st.targets = st.targets[:len(st.targets)-1]
			return st, nil
		case "+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^=", "@=":
			p.i++
			e, err := p.exprList()
			if err != nil {
				return nil, err
			}
			return &pstmt{op: "aug", line: line, targets: []*pnode{first}, value: &pnode{op: "bin", s: strings.TrimSuffix(o, "="), kids: []*pnode{first, e}}}, nil
		case ":":
			p.i++
			ann, err := p.expr()
			if err != nil {
				return nil, err
			}
			st := &pstmt{op: "assign", line: line, exprs: []*pnode{ann}}
			if p.accept("=") {
				v, err := p.exprListStar()
				if err != nil {
					return nil, err
				}
				st.targets, st.value = []*pnode{first}, v
			}
			return st, nil
		}
	}
	return &pstmt{op: "expr", line: line, exprs: []*pnode{first}}, nil
}

func (p *pyParser) dotted() (string, error) {
	var parts []string
	for {
		n := p.next()
		if n.k != ptName {
			return "", p.errf("expected a module name")
		}
		parts = append(parts, n.s)
		if !p.accept(".") {
			break
		}
	}
	return strings.Join(parts, "."), nil
}

// target parses an assignment target of a for or with.
func (p *pyParser) target() (*pnode, error) { return p.primaryStar() }

func (p *pyParser) targetList() (*pnode, error) {
	first, err := p.target()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	return p.tupleTail(first, func() bool { return p.isName("in") }, p.target)
}

// tupleTail reads the rest of a tuple whose first item is read: each
// ", item", until there is no comma or the comma is a trailing one (end
// reports what follows it).
func (p *pyParser) tupleTail(first *pnode, end func() bool, item func() (*pnode, error)) (*pnode, error) {
	out := &pnode{op: "tuple", kids: []*pnode{first}}
	for p.accept(",") {
		if end() {
			break
		}
		e, err := item()
		if err != nil {
			return nil, err
		}
		out.kids = append(out.kids, e)
	}
	return out, nil
}

func (p *pyParser) primaryStar() (*pnode, error) {
	if p.accept("*") {
		e, err := p.primaryExpr()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "star", kids: []*pnode{e}}, nil
	}
	if p.isOp("(") || p.isOp("[") {
		return p.primaryExpr()
	}
	return p.primaryExpr()
}

// exprList parses "a, b, c" (a tuple when there is a comma).
func (p *pyParser) exprList() (*pnode, error) { return p.listOf(p.expr) }

func (p *pyParser) exprListStar() (*pnode, error) {
	return p.listOf(func() (*pnode, error) {
		if p.isName("yield") {
			return p.expr()
		}
		if p.accept("*") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			return &pnode{op: "star", kids: []*pnode{e}}, nil
		}
		return p.namedExpr()
	})
}

func (p *pyParser) listOf(f func() (*pnode, error)) (*pnode, error) {
	first, err := f()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	return p.tupleTail(first, p.endOfList, f)
}

// keywordStmt reads a statement of a keyword (return, del, assert,
// raise) and the expression read reads after it, if the statement goes
// on: an "expr" statement.
func (p *pyParser) keywordStmt(line int, read func() (*pnode, error)) (*pstmt, error) {
	p.i++
	st := &pstmt{op: "expr", line: line}
	if p.peek().k == ptNewline || p.peek().k == ptEOF || p.isOp(";") {
		return st, nil
	}
	e, err := read()
	if err != nil {
		return nil, err
	}
	st.exprs = []*pnode{e}
	return st, nil
}

func (p *pyParser) endOfList() bool {
	t := p.peek()
	if t.k == ptNewline || t.k == ptEOF {
		return true
	}
	if t.k == ptOp {
		switch t.s {
		case ")", "]", "}", "=", ";", ":":
			return true
		}
	}
	return false
}

func (p *pyParser) namedExpr() (*pnode, error) {
	if p.peek().k == ptName && p.i+1 < len(p.toks) && p.toks[p.i+1].k == ptOp && p.toks[p.i+1].s == ":=" {
		n := p.next()
		p.i++
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "walrus", s: n.s, kids: []*pnode{e}}, nil
	}
	return p.expr()
}

// expr parses a full expression: lambda, conditional, yield.
func (p *pyParser) expr() (*pnode, error) {
	p.deep++
	defer func() { p.deep-- }()
	if p.deep > 200 {
		return nil, errDepth
	}
	if p.accept("lambda") {
		params, defaults, err := p.params(":")
		if err != nil {
			return nil, err
		}
		body, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "lambda", names: params, kids: append([]*pnode{body}, defaults...)}, nil
	}
	if p.accept("yield") {
		p.accept("from")
		if p.endOfList() {
			return &pnode{op: "const"}, nil
		}
		e, err := p.exprList()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "yield", kids: []*pnode{e}}, nil
	}
	e, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if p.accept("if") {
		c, f, err := p.sides(p.orExpr, "else", p.expr)
		if err != nil {
			return nil, err
		}
		return &pnode{op: "ifexp", kids: []*pnode{e, c, f}}, nil
	}
	return e, nil
}

// sides reads "left kw right": a for's targets "in" its iterable, an
// if-expression's condition "else" its alternative.
func (p *pyParser) sides(left func() (*pnode, error), kw string, right func() (*pnode, error)) (l, r *pnode, err error) {
	if l, err = left(); err != nil {
		return nil, nil, err
	}
	if err = p.expect(kw); err != nil {
		return nil, nil, err
	}
	if r, err = right(); err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (p *pyParser) orExpr() (*pnode, error) {
	return p.binary(p.andExpr, "or")
}
func (p *pyParser) andExpr() (*pnode, error) {
	return p.binary(p.notExpr, "and")
}
func (p *pyParser) notExpr() (*pnode, error) {
	if p.accept("not") {
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "un", s: "not", kids: []*pnode{e}}, nil
	}
	return p.comparison()
}

func (p *pyParser) comparison() (*pnode, error) {
	e, err := p.bitOr()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op := ""
		switch {
		case t.k == ptOp && (t.s == "<" || t.s == ">" || t.s == "==" || t.s == ">=" || t.s == "<=" || t.s == "!="):
			op = t.s
			p.i++
		case t.k == ptName && t.s == "in":
			op = "in"
			p.i++
		case t.k == ptName && t.s == "not" && p.i+1 < len(p.toks) && p.toks[p.i+1].s == "in":
			op = "not in"
			p.i += 2
		case t.k == ptName && t.s == "is":
			op = "is"
			p.i++
			p.accept("not")
		default:
			return e, nil
		}
		r, err := p.bitOr()
		if err != nil {
			return nil, err
		}
		e = &pnode{op: "cmp", s: op, kids: []*pnode{e, r}}
	}
}

func (p *pyParser) binary(next func() (*pnode, error), ops ...string) (*pnode, error) {
	e, err := next()
	if err != nil {
		return nil, err
	}
	for {
		matched := ""
		for _, o := range ops {
			if p.isOp(o) || p.isName(o) {
				matched = o
				break
			}
		}
		if matched == "" {
			return e, nil
		}
		p.i++
		r, err := next()
		if err != nil {
			return nil, err
		}
		e = &pnode{op: "bin", s: matched, kids: []*pnode{e, r}}
	}
}

func (p *pyParser) bitOr() (*pnode, error)  { return p.binary(p.bitXor, "|") }
func (p *pyParser) bitXor() (*pnode, error) { return p.binary(p.bitAnd, "^") }
func (p *pyParser) bitAnd() (*pnode, error) { return p.binary(p.shift, "&") }
func (p *pyParser) shift() (*pnode, error)  { return p.binary(p.arith, "<<", ">>") }
func (p *pyParser) arith() (*pnode, error)  { return p.binary(p.term, "+", "-") }
func (p *pyParser) term() (*pnode, error)   { return p.binary(p.factor, "*", "/", "//", "%", "@") }

func (p *pyParser) factor() (*pnode, error) {
	for _, o := range []string{"-", "+", "~"} {
		if p.accept(o) {
			e, err := p.factor()
			if err != nil {
				return nil, err
			}
			return &pnode{op: "un", s: o, kids: []*pnode{e}}, nil
		}
	}
	return p.power()
}

func (p *pyParser) power() (*pnode, error) {
	await := p.accept("await")
	e, err := p.primaryExpr()
	if err != nil {
		return nil, err
	}
	if await {
		e = &pnode{op: "await", kids: []*pnode{e}}
	}
	if p.accept("**") {
		r, err := p.factor()
		if err != nil {
			return nil, err
		}
		e = &pnode{op: "bin", s: "**", kids: []*pnode{e, r}}
	}
	return e, nil
}

func (p *pyParser) primaryExpr() (*pnode, error) {
	e, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("."):
			n := p.next()
			if n.k != ptName {
				return nil, p.errf("expected an attribute name")
			}
			e = &pnode{op: "attr", s: n.s, kids: []*pnode{e}, line: n.line}
		case p.accept("("):
			args, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			e = &pnode{op: "call", kids: append([]*pnode{e}, args...)}
		case p.accept("["):
			idx, err := p.subscript()
			if err != nil {
				return nil, err
			}
			e = &pnode{op: "sub", kids: []*pnode{e, idx}}
		default:
			return e, nil
		}
	}
}

// callArgs parses arguments after "(" through ")".
func (p *pyParser) callArgs() ([]*pnode, error) {
	var out []*pnode
	for !p.accept(")") {
		var a *pnode
		var err error
		switch {
		case p.accept("**"):
			a, err = p.expr()
			a = &pnode{op: "dstar", kids: []*pnode{a}}
		case p.accept("*"):
			a, err = p.expr()
			a = &pnode{op: "star", kids: []*pnode{a}}
		case p.peek().k == ptName && p.i+1 < len(p.toks) && p.toks[p.i+1].k == ptOp && p.toks[p.i+1].s == "=":
			n := p.next()
			p.i++
			a, err = p.expr()
			a = &pnode{op: "kw", s: n.s, kids: []*pnode{a}}
		default:
			a, err = p.namedExpr()
			if err == nil && p.atComprehension() {
				a, err = p.comprehension("genexp", a, nil)
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if !p.accept(",") {
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			break
		}
	}
	return out, nil
}

func (p *pyParser) subscript() (*pnode, error) {
	var items []*pnode
	for !p.accept("]") {
		var lo, hi, step *pnode
		var err error
		if !p.isOp(":") {
			if lo, err = p.exprStarOrNamed(); err != nil {
				return nil, err
			}
		}
		if p.accept(":") {
			if !p.isOp("]") && !p.isOp(":") && !p.isOp(",") {
				if hi, err = p.expr(); err != nil {
					return nil, err
				}
			}
			if p.accept(":") && !p.isOp("]") && !p.isOp(",") {
				if step, err = p.expr(); err != nil {
					return nil, err
				}
			}
			lo = &pnode{op: "slice", kids: []*pnode{lo, hi, step}}
		}
		items = append(items, lo)
		if !p.accept(",") {
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			break
		}
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &pnode{op: "tuple", kids: items}, nil
}

func (p *pyParser) exprStarOrNamed() (*pnode, error) {
	if p.accept("*") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &pnode{op: "star", kids: []*pnode{e}}, nil
	}
	return p.namedExpr()
}

func (p *pyParser) comprehension(op string, elem, key *pnode) (*pnode, error) {
	c := &pnode{op: "comp", s: op, kids: []*pnode{elem}}
	if key != nil {
		c.kids = append(c.kids, key)
	}
	for p.accept("async") || p.isName("for") {
		if err := p.expect("for"); err != nil {
			return nil, err
		}
		tg, it, err := p.sides(p.targetList, "in", p.orExpr)
		if err != nil {
			return nil, err
		}
		c.kids = append(c.kids, &pnode{op: "target", kids: []*pnode{tg}}, it)
		for p.accept("if") {
			cond, err := p.orExpr()
			if err != nil {
				return nil, err
			}
			c.kids = append(c.kids, cond)
		}
	}
	return c, nil
}

func (p *pyParser) atom() (*pnode, error) {
	t := p.next()
	switch t.k {
	case ptName:
		switch t.s {
		case "None", "True", "False":
			return &pnode{op: "const", s: t.s}, nil
		case "lambda", "yield", "not", "await", "if", "else", "for", "in", "is", "and", "or", "import", "from", "def", "class", "return", "pass", "global", "del", "raise", "while", "with", "try", "except", "finally", "assert", "break", "continue", "elif", "nonlocal", "async", "as":
			p.i--
			return nil, p.errf("unexpected keyword")
		}
		return &pnode{op: "name", s: t.s, line: t.line}, nil
	case ptNum:
		s := strings.ReplaceAll(strings.ToLower(t.s), "_", "")
		n := &pnode{op: "num", s: t.s, isNum: true}
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			n.n = v
		} else if strings.HasPrefix(s, "0") && len(s) > 1 && !strings.ContainsAny(s, ".ejx") {
			if v, err := strconv.ParseInt(s[1:], 8, 64); err == nil {
				n.n = v
			}
		} else {
			n.isNum = false
		}
		return n, nil
	case ptStr:
		// Adjacent literals concatenate.
		node := strNode(t)
		for p.peek().k == ptStr {
			n2 := strNode(p.next())
			node = &pnode{op: "bin", s: "+", kids: []*pnode{node, n2}}
		}
		return node, nil
	case ptOp:
		switch t.s {
		case "...":
			return &pnode{op: "const", s: "..."}, nil
		case "(":
			if p.accept(")") {
				return &pnode{op: "tuple"}, nil
			}
			first, err := p.exprStarOrYield()
			if err != nil {
				return nil, err
			}
			if p.atComprehension() {
				return p.closedComprehension("genexp", first, nil, ")")
			}
			if p.accept(")") {
				return first, nil
			}
			out, err := p.tupleTail(first, func() bool { return p.isOp(")") }, p.exprStarOrNamed)
			if err != nil {
				return nil, err
			}
			return out, p.expect(")")
		case "[":
			out := &pnode{op: "list"}
			for !p.accept("]") {
				e, err := p.exprStarOrNamed()
				if err != nil {
					return nil, err
				}
				if len(out.kids) == 0 && p.atComprehension() {
					return p.closedComprehension("list", e, nil, "]")
				}
				out.kids = append(out.kids, e)
				if !p.accept(",") {
					if err := p.expect("]"); err != nil {
						return nil, err
					}
					break
				}
			}
			return out, nil
		case "{":
			return p.dictOrSet()
		}
	}
	p.i--
	return nil, p.errf("unexpected token")
}

// atComprehension reports whether a comprehension's "for" (or "async
// for") follows.
func (p *pyParser) atComprehension() bool { return p.isName("for") || p.isName("async") }

// closedComprehension reads the comprehension of kind over elt (key, for
// a dict) and then its closing bracket.
func (p *pyParser) closedComprehension(kind string, elt, key *pnode, close string) (*pnode, error) {
	c, err := p.comprehension(kind, elt, key)
	if err != nil {
		return nil, err
	}
	return c, p.expect(close)
}

func (p *pyParser) exprStarOrYield() (*pnode, error) {
	if p.isName("yield") {
		return p.expr()
	}
	return p.exprStarOrNamed()
}

func strNode(t ptok) *pnode {
	if t.f {
		return &pnode{op: "fstr", raw: t.raw, s: t.s, line: t.line}
	}
	return &pnode{op: "str", val: t.val}
}

func (p *pyParser) dictOrSet() (*pnode, error) {
	if p.accept("}") {
		return &pnode{op: "dict"}, nil
	}
	d := &pnode{op: "dict"}
	s := &pnode{op: "set"}
	for i := 0; ; i++ {
		if p.accept("**") {
			e, err := p.bitOr()
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, nil)
			d.kids = append(d.kids, e)
		} else {
			k, err := p.exprStarOrNamed()
			if err != nil {
				return nil, err
			}
			if p.accept(":") {
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				if i == 0 && p.atComprehension() {
					return p.closedComprehension("dict", v, k, "}")
				}
				d.keys = append(d.keys, k)
				d.kids = append(d.kids, v)
			} else {
				if i == 0 && p.atComprehension() {
					return p.closedComprehension("set", k, nil, "}")
				}
				s.kids = append(s.kids, k)
			}
		}
		if !p.accept(",") {
			if err := p.expect("}"); err != nil {
				return nil, err
			}
			break
		}
		if p.accept("}") {
			break
		}
	}
	if len(s.kids) > 0 && len(d.kids) > 0 {
		return nil, p.errf("mixed dict and set")
	}
	if len(s.kids) > 0 {
		return s, nil
	}
	return d, nil
}
