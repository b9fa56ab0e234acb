package codescan

import (
	"strings"
)

// The Python evaluator walks the parsed tree once, in source order,
// with every branch and function body taken as reachable, and tracks
// what names hold: modules, functions (so `s = os.system; s('…')` is
// still os.system), strings (folded through concatenation, %, format,
// join, slicing, base64, hex and rot13), files and paths.

type pyScope struct {
	vars   map[string]*value
	parent *pyScope
}

func (sc *pyScope) lookup(n string) (*value, bool) {
	for s := sc; s != nil; s = s.parent {
		if v, ok := s.vars[n]; ok {
			return v, true
		}
	}
	return nil, false
}

type pyEval struct {
	*state
	codeNames
	star []string // modules imported with *
}

// codeNames is what a walk knows of the code's names as a whole, beside
// the scope at hand: the same for Python and JavaScript.
type codeNames struct {
	// locals are the names of the functions, classes and methods the
	// code defines.
	locals map[string]bool
	// assigned counts the places each name is assigned. The walk takes
	// branches and bodies in source order, so a name assigned in more
	// than one place may hold, at run time, a value other than the one
	// the walk last saw: such a name's strings are run-time values and
	// its functions are followed but leave the code incomplete.
	assigned map[string]int
	// seen collects every value assigned to each name (a first walk);
	// prior is what the first walk saw, for the second.
	seen, prior map[string][]*value
}

// walkTwice walks the code twice with walk: the first walk, on a state
// of its own that only learns, collects every value each name is given
// (seen); the second judges on s with that knowledge (prior).
func walkTwice(s *state, lang string, names codeNames, walk func(*state, codeNames)) {
	learn := names
	learn.seen = map[string][]*value{}
	walk(&state{lang: lang, nest: s.nest, learning: true}, learn)
	names.prior = learn.seen
	walk(s, names)
}

func analyzePython(src string) Result {
	s := &state{lang: Python}
	runPython(s, src)
	return s.result()
}

func runPython(s *state, src string) {
	prog, err := parsePython(src)
	if err != nil {
		s.incomplete("python code that could not be read: %v", err)
		return
	}
	names := codeNames{locals: map[string]bool{}, assigned: map[string]int{}}
	collectDefs(prog, names.locals)
	countAssigned(prog, names.assigned)
	walkTwice(s, Python, names, func(s *state, names codeNames) {
		e := &pyEval{state: s, codeNames: names}
		e.block(prog, &pyScope{vars: map[string]*value{}})
	})
}

// countAssigned counts the assignments of each name: targets of =,
// augmented assignment, for, with, except and :=.
func countAssigned(b []*pstmt, into map[string]int) {
	var target func(n *pnode)
	target = func(n *pnode) {
		if n == nil {
			return
		}
		switch n.op {
		case "name":
			into[n.s]++
		case "tuple", "list", "star":
			for _, k := range n.kids {
				target(k)
			}
		}
	}
	var expr func(n *pnode)
	expr = func(n *pnode) {
		if n == nil {
			return
		}
		switch n.op {
		case "walrus":
			into[n.s]++
		case "target":
			for _, k := range n.kids {
				target(k)
			}
		}
		for _, k := range n.kids {
			expr(k)
		}
	}
	for _, st := range b {
		if st.op == "assign" || st.op == "aug" || st.op == "block" {
			for _, t := range st.targets {
				target(t)
			}
		}
		expr(st.value)
		for _, x := range st.exprs {
			expr(x)
		}
		countAssigned(st.body, into)
	}
}

func collectDefs(b []*pstmt, into map[string]bool) {
	for _, st := range b {
		if st.op == "def" || st.op == "class" {
			into[st.name] = true
		}
		collectDefs(st.body, into)
	}
}

func (e *pyEval) block(b []*pstmt, sc *pyScope) {
	// Functions and classes of a block are callable before their
	// definition is reached (a call inside an earlier function body).
	for _, st := range b {
		if st.op == "def" || st.op == "class" {
			sc.vars[st.name] = &value{k: kLocal, qual: st.name}
		}
	}
	for _, st := range b {
		e.stmt(st, sc)
	}
}

func (e *pyEval) stmt(st *pstmt, sc *pyScope) {
	switch st.op {
	case "expr":
		for _, x := range st.exprs {
			e.use(e.expr(x, sc))
		}
	case "assign":
		for _, x := range st.exprs {
			e.expr(x, sc)
		}
		if st.value == nil {
			return
		}
		v := e.expr(st.value, sc)
		for _, t := range st.targets {
			e.assign(t, v, sc)
		}
	case "aug":
		e.assign(st.targets[0], e.expr(st.value, sc), sc)
	case "import":
		for _, im := range st.imports {
			name, alias := im[0], im[1]
			if !pyModuleKnown(name) {
				e.incomplete("imports module %s, whose effects are not known", name)
				v := vUnknown
				if alias != "" {
					sc.vars[alias] = v
				} else {
					sc.vars[strings.SplitN(name, ".", 2)[0]] = v
				}
				continue
			}
			if alias != "" {
				sc.vars[alias] = mod(name)
			} else {
				top := strings.SplitN(name, ".", 2)[0]
				sc.vars[top] = mod(top)
			}
		}
	case "from":
		if strings.HasPrefix(st.module, ".") || !pyModuleKnown(st.module) {
			e.incomplete("imports from module %s, whose effects are not known", st.module)
			for _, im := range st.imports {
				sc.vars[firstNonEmpty(im[1], im[0])] = vUnknown
			}
			return
		}
		if st.star {
			e.star = append(e.star, st.module)
			return
		}
		for _, im := range st.imports {
			sc.vars[firstNonEmpty(im[1], im[0])] = e.attrOfModule(st.module, im[0])
		}
	case "def":
		for _, x := range st.exprs {
			e.use(e.expr(x, sc))
		}
		inner := &pyScope{vars: map[string]*value{}, parent: sc}
		for _, p := range st.params {
			inner.vars[p] = vData
		}
		e.block(st.body, inner)
		sc.vars[st.name] = &value{k: kLocal, qual: st.name}
	case "class":
		for _, x := range st.exprs {
			e.use(e.expr(x, sc))
		}
		e.block(st.body, &pyScope{vars: map[string]*value{}, parent: sc})
		sc.vars[st.name] = &value{k: kLocal, qual: st.name}
	case "block":
		var vals []*value
		for _, x := range st.exprs {
			v := e.expr(x, sc)
			vals = append(vals, v)
		}
		for i, t := range st.targets {
			if t == nil {
				continue
			}
			v := vData
			if i < len(vals) && len(st.targets) == len(vals) && vals[i].k == kObj {
				v = vals[i] // with open(p) as f
			}
			e.assign(t, v, sc)
		}
		e.block(st.body, sc)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// use checks a value that is dropped or stored somewhere the analysis
// does not follow: a dangerous function handed on as a value cannot be
// followed to where it is called.
func (e *pyEval) use(v *value) {
	e.handedOn(v, pyCategory, func(m string) bool {
		return m != "builtins" && m != "os" && m != "subprocess" && m != "shutil" && m != "importlib" && m != "sys" && m != "pty"
	})
}

func (e *pyEval) assign(t *pnode, v *value, sc *pyScope) {
	switch t.op {
	case "name":
		sc.vars[t.s] = v
		if e.seen != nil && len(e.seen[t.s]) < 50 {
			e.seen[t.s] = append(e.seen[t.s], v)
		}
	case "tuple", "list":
		for i, k := range t.kids {
			ev := vData
			if v.k == kList && len(v.elems) == len(t.kids) {
				ev = v.elems[i]
			}
			e.assign(k, ev, sc)
		}
	case "star":
		e.assign(t.kids[0], &value{k: kList}, sc)
	case "attr":
		base := e.expr(t.kids[0], sc)
		if base.k == kMod || base.k == kFunc {
			e.incomplete("assigns %s.%s", base.qual, t.s)
		}
		e.use(v)
	case "sub":
		base := e.expr(t.kids[0], sc)
		idx := e.expr(t.kids[1], sc)
		if e.envAssign(base, "os.environ", idx, v) {
			return
		}
		if base.k == kMod || base.k == kFunc {
			e.incomplete("assigns into %s", base.qual)
		}
		e.use(v)
	default:
		e.incomplete("assignment to an expression that is not read")
	}
}

func (e *pyEval) lookupName(n string, sc *pyScope) *value {
	if v, ok := sc.lookup(n); ok {
		if e.assigned[n] > 1 {
			return e.unstableValue(n, v, e.prior[n], func(q string) bool { return pyCategory(q) == catHarmless })
		}
		return v
	}
	switch n {
	case "__name__", "__file__", "__doc__":
		return dynStr()
	}
	if pyCategory("builtins."+n) != catUnknown {
		return fn("builtins." + n)
	}
	if isExceptionName(n) {
		return fn("builtins.Exception")
	}
	for _, m := range e.star {
		if v := e.attrOfModule(m, n); v.k != kUnknown {
			return v
		}
	}
	if e.locals[n] {
		return &value{k: kLocal, qual: n}
	}
	e.incomplete("unknown name %s", n)
	if pyModules[n] {
		// A module used without its import still names what the code
		// means to run: follow it, the code stays incomplete.
		return mod(n)
	}
	return vUnknown
}

// unstableValue is the value of a name assigned in several places:
// v is what the walk last gave it, all what any assignment gave it. A
// string is a run-time value unless every assignment gave the same; a
// function, module or object is kept when every assignment gave the
// same one or only harmless ones, and otherwise followed with the code
// marked incomplete.
func (s *state) unstableValue(n string, v *value, all []*value, harmless func(string) bool) *value {
	switch v.k {
	case kStr:
		lit, ok := v.known()
		for _, o := range all {
			if ol, ook := o.known(); !ok || !ook || ol != lit {
				return dynStr()
			}
		}
		return v
	case kNum, kList, kDict:
		return vData
	case kFunc, kMod, kObj:
		same := len(all) > 0
		for _, o := range all {
			switch {
			case o.k == v.k && o.qual == v.qual:
			case o.k == kFunc && (strings.HasPrefix(o.qual, "data.") || harmless(o.qual)) && v.k == kFunc && (strings.HasPrefix(v.qual, "data.") || harmless(v.qual)):
			case o.k == kData || o.k == kNone || o.k == kStr || o.k == kNum || o.k == kList || o.k == kDict || o.k == kLocal:
				if v.k != kObj && !(v.k == kFunc && (strings.HasPrefix(v.qual, "data.") || harmless(v.qual))) {
					same = false
				}
			default:
				same = false
			}
		}
		if !same {
			s.incomplete("%s is assigned in several places: what it holds when used depends on the path taken", n)
		}
	}
	return v
}

func isExceptionName(n string) bool {
	return strings.HasSuffix(n, "Error") || strings.HasSuffix(n, "Exception") || strings.HasSuffix(n, "Warning") ||
		n == "KeyboardInterrupt" || n == "StopIteration" || n == "SystemExit" || n == "GeneratorExit" || n == "BaseException"
}

// attrOfModule is m.name: a submodule, or a function or attribute,
// checked against the vocabulary.
func (e *pyEval) attrOfModule(m, name string) *value {
	if m == "builtins" {
		if pyCategory("builtins."+name) != catUnknown {
			return fn("builtins." + name)
		}
		e.incomplete("unknown builtins.%s", name)
		return vUnknown
	}
	q := m + "." + name
	switch pyCategory(q) {
	case catModule:
		return mod(q)
	case catUnknown:
		e.incomplete("unknown %s", q)
		return vUnknown
	}
	return fn(q)
}

func (e *pyEval) expr(n *pnode, sc *pyScope) *value {
	if n == nil {
		return vNone
	}
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > 400 {
		e.incomplete("expression nested too deep")
		return vUnknown
	}
	switch n.op {
	case "name":
		return e.lookupName(n.s, sc)
	case "num":
		if n.isNum {
			return num(n.n)
		}
		return vData
	case "str":
		return n.val
	case "fstr":
		return e.fstring(n, sc)
	case "const":
		if n.s == "None" {
			return vNone
		}
		return vData
	case "attr":
		return e.attr(e.expr(n.kids[0], sc), n.s)
	case "call":
		return e.call(n, sc)
	case "sub":
		return e.subscript(e.expr(n.kids[0], sc), n.kids[1], sc)
	case "list", "tuple", "set":
		out := &value{k: kList}
		for _, k := range n.kids {
			v := e.expr(k, sc)
			if k.op == "star" && v.k == kList {
				out.elems = append(out.elems, v.elems...)
				continue
			}
			out.elems = append(out.elems, v)
		}
		return out
	case "dict":
		out := &value{k: kDict}
		for i, k := range n.kids {
			v := e.expr(k, sc)
			key := "*"
			if n.keys[i] != nil {
				kv := e.expr(n.keys[i], sc)
				if s, ok := kv.known(); ok {
					key = s
				}
			}
			out.keys = append(out.keys, key)
			out.elems = append(out.elems, v)
		}
		return out
	case "star", "dstar", "await", "yield":
		return e.expr(n.kids[0], sc)
	case "kw":
		return e.expr(n.kids[0], sc)
	case "slice":
		for _, k := range n.kids {
			if k != nil {
				e.expr(k, sc)
			}
		}
		return vData
	case "walrus":
		v := e.expr(n.kids[0], sc)
		sc.vars[n.s] = v
		return v
	case "un":
		v := e.expr(n.kids[0], sc)
		if n.s == "-" && v.k == kNum {
			return num(-v.n)
		}
		return vData
	case "bin":
		return e.binop(n.s, e.expr(n.kids[0], sc), e.expr(n.kids[1], sc))
	case "cmp":
		e.use(e.expr(n.kids[0], sc))
		e.use(e.expr(n.kids[1], sc))
		return vData
	case "ifexp":
		a, c, b := e.expr(n.kids[0], sc), e.expr(n.kids[1], sc), e.expr(n.kids[2], sc)
		e.use(c)
		if a.k == kStr || b.k == kStr {
			return dynStr()
		}
		if a.k == kFunc || b.k == kFunc || a.k == kMod || b.k == kMod {
			e.use(a)
			e.use(b)
			return vUnknown
		}
		return vData
	case "lambda":
		inner := &pyScope{vars: map[string]*value{}, parent: sc}
		for _, p := range n.names {
			inner.vars[p] = vData
		}
		for _, d := range n.kids[1:] {
			e.expr(d, sc)
		}
		e.use(e.expr(n.kids[0], inner))
		return &value{k: kLocal, qual: "lambda"}
	case "comp":
		inner := &pyScope{vars: map[string]*value{}, parent: sc}
		// Targets first, then the element.
		var elem []*pnode
		for i, k := range n.kids {
			if k.op == "target" {
				e.assign(k.kids[0], vData, inner)
				continue
			}
			if i == 0 || (n.s == "dict" && i == 1) {
				elem = append(elem, k)
				continue
			}
			e.use(e.expr(k, inner))
		}
		for _, k := range elem {
			e.use(e.expr(k, inner))
		}
		return &value{k: kData}
	}
	e.incomplete("python construct %s not read", n.op)
	return vUnknown
}

// fstring evaluates an f-string: literal text, and the expressions in
// braces, which run.
func (e *pyEval) fstring(n *pnode, sc *pyScope) *value {
	out := []*value{}
	body := n.raw
	raw := strings.Contains(n.s, "r")
	var lit strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '{' && i+1 < len(body) && body[i+1] == '{' || c == '}' && i+1 < len(body) && body[i+1] == '}' {
			lit.WriteByte(c)
			i++
			continue
		}
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		// Find the matching close brace, skipping nested brackets and
		// strings.
		field, j := nesting{depth: 1}, i+1
		for ; j < len(body) && field.depth > 0; j++ {
			field.step(body[j])
		}
		if field.depth != 0 {
			e.incomplete("f-string that could not be read")
			return dynStr()
		}
		inner := body[i+1 : j-1]
		// Cut a conversion (!r) or format spec (:>10) at depth 0.
		cut := len(inner)
		var in nesting
		for k := 0; k < len(inner); k++ {
			ch := inner[k]
			if in.step(ch) && in.depth == 0 && (ch == '!' && k+1 < len(inner) && inner[k+1] != '=' || ch == ':') {
				if cut == len(inner) {
					cut = k
				}
			}
		}
		src := strings.TrimSuffix(strings.TrimSpace(inner[:cut]), "=")
		if cut < len(inner) && strings.Contains(inner[cut:], "{") {
			// A nested replacement field in the format spec.
			e.incomplete("f-string with a computed format")
		}
		prog, err := parsePython(src)
		if err != nil || len(prog) != 1 || prog[0].op != "expr" || len(prog[0].exprs) != 1 {
			e.incomplete("f-string expression that could not be read")
			return dynStr()
		}
		if lit.Len() > 0 {
			out = append(out, e.litStr(lit.String(), raw))
			lit.Reset()
		}
		v := e.expr(prog[0].exprs[0], sc)
		e.use(v)
		if cut < len(inner) {
			v = dynStr()
		}
		out = append(out, v.asStr())
		i = j - 1
	}
	if lit.Len() > 0 {
		out = append(out, e.litStr(lit.String(), raw))
	}
	return concat(out...)
}

func (e *pyEval) litStr(s string, raw bool) *value {
	if raw {
		return str(s)
	}
	return pyUnescape(s, false)
}

func (e *pyEval) attr(base *value, name string) *value {
	if strings.HasPrefix(name, "__") && name != "__name__" && name != "__doc__" && name != "__enter__" && name != "__exit__" {
		e.incomplete("special attribute %s", name)
		return vUnknown
	}
	switch base.k {
	case kUnknown:
		return vUnknown
	case kMod:
		return e.attrOfModule(base.qual, name)
	case kFunc:
		q := base.qual + "." + name
		if pyCategory(q) != catUnknown {
			return fn(q)
		}
		if pyCategory(base.qual) == catHarmless || strings.HasPrefix(base.qual, "data.") {
			return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": base}}
		}
		e.incomplete("unknown %s", q)
		return vUnknown
	case kObj:
		return &value{k: kFunc, qual: base.qual + "." + name, fields: map[string]*value{"self": base}}
	case kLocal:
		if e.locals[name] {
			return &value{k: kFunc, qual: "local." + name}
		}
		if pyDataMethods[name] {
			return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": vData}}
		}
		return vData // a field of an object of the code's own class
	}
	return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": base}}
}

func (e *pyEval) subscript(base *value, idx *pnode, sc *pyScope) *value {
	if idx.op == "slice" {
		var parts []*value
		for _, k := range idx.kids {
			if k != nil {
				parts = append(parts, e.expr(k, sc))
			} else {
				parts = append(parts, nil)
			}
		}
		if s, ok := base.known(); ok {
			if parts[0] == nil && parts[1] == nil && parts[2] != nil && parts[2].k == kNum && parts[2].n == -1 {
				return str(reverse(s))
			}
			return dynStr()
		}
		if base.k == kStr {
			return dynStr()
		}
		return vData
	}
	iv := e.expr(idx, sc)
	switch base.k {
	case kUnknown:
		return vUnknown
	case kMod:
		e.incomplete("subscript of module %s", base.qual)
		return vUnknown
	case kFunc:
		if pyCategory(base.qual) != catHarmless {
			e.incomplete("subscript of %s", base.qual)
			return vUnknown
		}
		if base.qual == "os.environ" {
			if n, ok := iv.known(); ok && n == "HOME" {
				return str("~")
			}
		}
		if base.qual == "os.environ" || base.qual == "sys.argv" {
			return dynStr()
		}
		return vData
	case kList:
		if iv.k == kNum && iv.n >= 0 && int(iv.n) < len(base.elems) {
			return base.elems[iv.n]
		}
		if iv.k == kNum && iv.n < 0 && int(-iv.n) <= len(base.elems) {
			return base.elems[len(base.elems)+int(iv.n)]
		}
		for _, x := range base.elems {
			if x.k == kFunc || x.k == kMod {
				e.incomplete("subscript of a list holding %s", x.qual)
				return vUnknown
			}
		}
		return vData
	case kDict:
		if k, ok := iv.known(); ok {
			for i, key := range base.keys {
				if key == k {
					return base.elems[i]
				}
			}
		}
		for _, x := range base.elems {
			if x.k == kFunc || x.k == kMod {
				e.incomplete("subscript of a dict holding %s", x.qual)
				return vUnknown
			}
		}
		return vData
	case kStr:
		if s, ok := base.known(); ok && iv.k == kNum && iv.n >= 0 && int(iv.n) < len(s) {
			return str(s[iv.n : iv.n+1])
		}
		return dynStr()
	}
	return vData
}

func (e *pyEval) binop(op string, a, b *value) *value {
	switch {
	case a.k == kUnknown || b.k == kUnknown:
		return vUnknown
	case op == "+" && (a.k == kStr || b.k == kStr):
		return concat(a, b)
	case op == "+" && a.k == kList && b.k == kList:
		return &value{k: kList, elems: append(append([]*value{}, a.elems...), b.elems...)}
	case op == "%" && a.k == kStr:
		return pyPercent(a, b)
	case op == "*" && a.k == kStr && b.k == kNum && b.n >= 0 && b.n < 64:
		out := []*value{}
		for range b.n {
			out = append(out, a)
		}
		return concat(out...)
	case op == "/" && a.k == kObj && (a.qual == "path"):
		return obj("path", map[string]*value{"path": concat(pathOf(a), str("/"), pathOf(b))})
	case a.k == kNum && b.k == kNum:
		switch op {
		case "+":
			return num(a.n + b.n)
		case "-":
			return num(a.n - b.n)
		case "*":
			return num(a.n * b.n)
		case "|":
			return num(a.n | b.n)
		}
		return vData
	case op == "and" || op == "or":
		if a.k == kStr || b.k == kStr {
			return dynStr()
		}
	}
	e.use(a)
	e.use(b)
	if a.k == kStr || b.k == kStr {
		return dynStr()
	}
	return vData
}

// pyPercent folds "fmt" % args for %s and %d.
func pyPercent(f, args *value) *value {
	fs, ok := f.known()
	if !ok {
		return dynStr()
	}
	var list []*value
	if args.k == kList {
		list = args.elems
	} else {
		list = []*value{args}
	}
	var out []*value
	var lit strings.Builder
	ai := 0
	for i := 0; i < len(fs); i++ {
		if fs[i] != '%' || i+1 >= len(fs) {
			lit.WriteByte(fs[i])
			continue
		}
		i++
		if fs[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		if fs[i] != 's' && fs[i] != 'd' && fs[i] != 'r' || ai >= len(list) {
			return dynStr()
		}
		out = append(out, str(lit.String()), list[ai].asStr())
		lit.Reset()
		ai++
	}
	out = append(out, str(lit.String()))
	return concat(out...)
}

func (e *pyEval) call(n *pnode, sc *pyScope) *value {
	callee := e.expr(n.kids[0], sc)
	c := &call{kw: map[string]*value{}}
	for _, a := range n.kids[1:] {
		v := e.expr(a, sc)
		switch a.op {
		case "kw":
			c.kw[a.s] = v
		case "dstar":
			if v.k == kDict {
				for i, k := range v.keys {
					c.kw[k] = v.elems[i]
				}
			} else {
				c.kw["**"] = v
			}
		case "star":
			if v.k == kList {
				c.args = append(c.args, v.elems...)
			} else {
				c.args = append(c.args, vData)
			}
		default:
			c.args = append(c.args, v)
		}
	}
	switch callee.k {
	case kUnknown:
		return vUnknown
	case kLocal:
		for _, a := range c.args {
			e.use(a)
		}
		for _, k := range sortedKeys(c.kw) {
			e.use(c.kw[k])
		}
		// An instance of the code's own class, or what one of its
		// functions returned: its methods are the code's own.
		return &value{k: kLocal, qual: "result"}
	case kFunc:
	default:
		e.incomplete("call of a value computed at run time")
		return vUnknown
	}
	c.name = callee.qual
	c.self = callee.fields["self"]
	if strings.HasPrefix(c.name, "local.") {
		if e.locals[strings.TrimPrefix(c.name, "local.")] {
			return &value{k: kLocal, qual: "result"}
		}
		e.incomplete("call of method %s, not defined in the code", strings.TrimPrefix(c.name, "local."))
		return vUnknown
	}
	if strings.HasPrefix(c.name, "data.") {
		return e.dataMethod(c)
	}
	if ef, ok := pyEffects[c.name]; ok {
		return ef(e.state, c)
	}
	if (c.name == "file.read" || c.name == "file.readline" || c.name == "file.readlines") && c.self != nil && c.self.fields["path"] != nil {
		// The file's content, which remembers where it came from.
		return &value{k: kStr, parts: []part{{dyn: true, src: "cat -- " + e.state.word(c.self.fields["path"])}}}
	}
	if c.self != nil && c.self.k == kObj && pyCategory(c.name) == catUnknown {
		// A data method on an object's content (a read file's text).
		m := c.name[strings.LastIndexByte(c.name, '.')+1:]
		if pyDataMethods[m] {
			return e.dataMethod(&call{name: "data." + m, args: c.args, kw: c.kw, self: dynStr()})
		}
	}
	if ef, ok := e.special(c); ok {
		return ef
	}
	if pyCategory(c.name) == catHarmless {
		for _, a := range c.args {
			e.use(a)
		}
		for _, k := range sortedKeys(c.kw) {
			e.use(c.kw[k])
		}
		return vData
	}
	e.incomplete("call of %s, whose effects are not known", c.name)
	return vUnknown
}

// special handles the builtins that read code or names at run time.
func (e *pyEval) special(c *call) (*value, bool) {
	switch c.name {
	case "os.path.expanduser", "posixpath.expanduser", "os.path.abspath", "os.path.normpath", "os.path.realpath",
		"posixpath.abspath", "posixpath.normpath", "posixpath.realpath":
		// The path as written: a leading ~ stays ~, which the shell
		// analyser resolves to the home directory.
		if a := c.arg(0, "path"); a != nil && a.k == kStr {
			return a, true
		}
		return dynStr(), true
	case "os.path.join", "posixpath.join":
		return pathJoin(c.args), true
	case "os.getenv", "os.environ.get":
		if n, ok := c.arg(0, "key").known(); ok && n == "HOME" {
			return str("~"), true
		}
		return dynStr(), true
	case "builtins.eval", "builtins.exec", "code.InteractiveInterpreter.runsource", "builtins.compile":
		src := c.arg(0, "source")
		if src != nil && src.k == kObj && src.qual == "code" {
			src = src.fields["src"]
		}
		lit, ok := src.known()
		if c.name == "builtins.compile" {
			if ok {
				return obj("code", map[string]*value{"src": str(lit)}), true
			}
			return vData, true
		}
		if !ok {
			e.find(ClassEval, Dangerous, "evaluates code built at run time")
			e.incomplete("%s of code built at run time", strings.TrimPrefix(c.name, "builtins."))
			return vUnknown, true
		}
		e.nested(func() { runPython(e.state, lit) })
		return vData, true
	case "builtins.__import__", "importlib.import_module":
		name, ok := c.arg(0, "name").known()
		if !ok {
			e.incomplete("import of a module named at run time")
			return vUnknown, true
		}
		if !pyModuleKnown(name) {
			e.incomplete("imports module %s, whose effects are not known", name)
			return vUnknown, true
		}
		if c.name == "builtins.__import__" {
			return mod(strings.SplitN(name, ".", 2)[0]), true
		}
		return mod(name), true
	case "builtins.getattr":
		name, ok := c.arg(1, "").known()
		if !ok {
			e.incomplete("getattr with a name computed at run time")
			return vUnknown, true
		}
		return e.attr(c.arg(0, ""), name), true
	case "builtins.hasattr", "builtins.isinstance", "builtins.callable", "builtins.type", "builtins.id", "builtins.dir", "builtins.repr", "builtins.print":
		return vData, true // hold or print without running anything
	case "builtins.str":
		if v := c.arg(0, ""); v != nil {
			return v.asStr(), true
		}
		return str(""), true
	case "builtins.chr":
		if v := c.arg(0, ""); v != nil && v.k == kNum && v.n >= 0 && v.n < 0x110000 {
			return str(string(rune(v.n))), true
		}
		return dynStr(), true
	case "builtins.bytes", "builtins.bytearray":
		if v := c.arg(0, ""); v != nil && v.k == kStr {
			return v, true
		}
		if v := c.arg(0, ""); v != nil && v.k == kList {
			var b []byte
			for _, x := range v.elems {
				if x.k != kNum {
					return dynStr(), true
				}
				b = append(b, byte(x.n))
			}
			return str(string(b)), true
		}
		return vData, true
	}
	return nil, false
}

// dataMethod is a method call on data (a string, list, dict, number,
// or a harmless result): a fixed set of names, some folded.
func (e *pyEval) dataMethod(c *call) *value {
	m, self, v := e.dataReceiver(c, pyDataMethods, e.use)
	if v != nil {
		return v
	}
	switch m {
	case "join":
		if sep, ok := self.known(); ok && len(c.args) == 1 && c.args[0].k == kList {
			return joined(c.args[0].elems, sep)
		}
		return dynStr()
	case "decode", "encode":
		if self.k == kStr {
			if enc, ok := c.arg(0, "encoding").known(); ok && strings.Contains(strings.ToLower(enc), "rot") {
				if s, ok := self.known(); ok {
					return str(rot13(s))
				}
			}
			return self
		}
		return dynStr()
	case "replace":
		if k, ok := knownAll(self, c.arg(0, ""), c.arg(1, "")); ok {
			return str(strings.ReplaceAll(k[0], k[1], k[2]))
		}
		return dynStr()
	case "upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold", "swapcase":
		if s, ok := self.known(); ok && len(c.args) == 0 {
			switch m {
			case "upper":
				return str(strings.ToUpper(s))
			case "lower", "casefold":
				return str(strings.ToLower(s))
			case "strip":
				return str(strings.TrimSpace(s))
			case "lstrip":
				return str(strings.TrimLeft(s, " \t\n\r"))
			case "rstrip":
				return str(strings.TrimRight(s, " \t\n\r"))
			}
		}
		return dynStr()
	case "format":
		if s, ok := self.known(); ok {
			var out []*value
			ai := 0
			for {
				i := strings.Index(s, "{}")
				if i < 0 || ai >= len(c.args) {
					break
				}
				out = append(out, str(s[:i]), c.args[ai].asStr())
				s = s[i+2:]
				ai++
			}
			if strings.ContainsAny(s, "{}") {
				return dynStr()
			}
			return concat(append(out, str(s))...)
		}
		return dynStr()
	case "get", "pop", "setdefault":
		if self.k == kDict {
			if k, ok := c.arg(0, "").known(); ok {
				for i, key := range self.keys {
					if key == k {
						return self.elems[i]
					}
				}
			}
		}
		if self.k == kFunc && self.qual == "os.environ" {
			return dynStr()
		}
	}
	if self.k == kStr {
		return dynStr()
	}
	return vData
}

// nesting follows quotes and brackets through Python source, a byte at
// a time: an f-string's replacement field ends at the bracket that
// closes its own, and its conversion or format spec starts outside
// every inner one.
type nesting struct {
	depth int  // brackets open
	quote byte // the quote of the string being read, or 0
}

// step reads ch and reports whether it is code outside any string, and
// neither a quote nor a bracket.
func (n *nesting) step(ch byte) bool {
	switch {
	case n.quote != 0:
		if ch == n.quote {
			n.quote = 0
		}
	case ch == '\'' || ch == '"':
		n.quote = ch
	case ch == '{' || ch == '[' || ch == '(':
		n.depth++
	case ch == '}' || ch == ']' || ch == ')':
		n.depth--
	default:
		return true
	}
	return false
}
