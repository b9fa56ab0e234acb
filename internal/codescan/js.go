package codescan

import (
	"encoding/base64"
	"reflect"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// The JavaScript evaluator walks goja's syntax tree the way the Python
// one walks its own: once, every branch and function body reachable,
// names bound to modules (require('child_process')), functions and
// folded strings. Nodes it has no rule for are still walked, through
// reflection, so no expression is skipped: each value found there is
// checked as handed on.

type jsEval struct {
	*state
	codeNames
	scopes []map[string]*value
}

func analyzeJS(src string) Result {
	s := &state{lang: Node}
	runJS(s, src)
	return s.result()
}

func runJS(s *state, src string) {
	prog, err := parser.ParseFile(nil, "", esmToCommon(stripShebang(src)), 0)
	if err != nil {
		s.incomplete("javascript that could not be read: %v", firstLine(err.Error()))
		return
	}
	names := codeNames{locals: map[string]bool{}, assigned: map[string]int{}}
	collectJSDefs(prog, names.locals)
	countJSAssigned(prog, names.assigned)
	if astDepth(reflect.ValueOf(prog), 0) > maxVisit {
		s.incomplete("javascript nested too deep")
		return
	}
	walkTwice(s, Node, names, func(s *state, names codeNames) {
		e := &jsEval{state: s, codeNames: names, scopes: []map[string]*value{{}}}
		e.program(prog)
	})
}

func (e *jsEval) program(prog *ast.Program) {
	e.hoist(prog.Body)
	for _, st := range prog.Body {
		e.stmt(st)
	}
}

func stripShebang(src string) string {
	if strings.HasPrefix(src, "#!") {
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			return src[i:]
		}
		return ""
	}
	return src
}

// esmImport matches the static import forms, which the parser does not
// read; they become the require they mean.
var (
	esmImport     = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+(.+?)[ \t]+from[ \t]+(['"][^'"\n]+['"])[ \t]*;?[ \t]*$`)
	esmBare       = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+(['"][^'"\n]+['"])[ \t]*;?[ \t]*$`)
	esmExport     = regexp.MustCompile(`(?m)^([ \t]*)export[ \t]+(default[ \t]+)?`)
	esmNamespace  = regexp.MustCompile(`^\*[ \t]+as[ \t]+([\w$]+)$`)
	esmDefaultAnd = regexp.MustCompile(`^([\w$]+)[ \t]*,[ \t]*(\{.*\}|\*[ \t]+as[ \t]+[\w$]+)$`)
)

func esmToCommon(src string) string {
	if !strings.Contains(src, "import") && !strings.Contains(src, "export") {
		return src
	}
	src = esmImport.ReplaceAllStringFunc(src, func(m string) string {
		sm := esmImport.FindStringSubmatch(m)
		what, from := strings.TrimSpace(sm[1]), sm[2]
		req := "require(" + from + ")"
		if d := esmDefaultAnd.FindStringSubmatch(what); d != nil {
			return "const " + d[1] + " = " + req + "; " + esmBinding(d[2], req)
		}
		return esmBinding(what, req)
	})
	src = esmBare.ReplaceAllString(src, "require($1);")
	return esmExport.ReplaceAllString(src, "$1")
}

func esmBinding(what, req string) string {
	if n := esmNamespace.FindStringSubmatch(what); n != nil {
		return "const " + n[1] + " = " + req + ";"
	}
	if strings.HasPrefix(what, "{") {
		return "const " + strings.ReplaceAll(what, " as ", ": ") + " = " + req + ";"
	}
	return "const " + what + " = " + req + ";"
}

// maxVisit bounds the depth visitAST walks; deeper code is not read.
const maxVisit = 4000

// visitAST calls f with every node reachable from rv.
func visitAST(rv reflect.Value, depth int, f func(n any)) {
	if !rv.IsValid() || depth > maxVisit {
		return
	}
	switch rv.Kind() {
	case reflect.Interface, reflect.Pointer:
		if rv.IsNil() {
			return
		}
		if rv.CanInterface() {
			f(rv.Interface())
		}
		visitAST(rv.Elem(), depth+1, f)
	case reflect.Struct:
		for i := 0; i < rv.NumField(); i++ {
			if rv.Type().Field(i).IsExported() {
				visitAST(rv.Field(i), depth+1, f)
			}
		}
	case reflect.Slice:
		for i := 0; i < rv.Len(); i++ {
			visitAST(rv.Index(i), depth+1, f)
		}
	}
}

// astDepth is how deep visitAST would go (capped just past maxVisit).
func astDepth(rv reflect.Value, depth int) int {
	if !rv.IsValid() || depth > maxVisit {
		return depth
	}
	max := depth
	switch rv.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !rv.IsNil() {
			max = astDepth(rv.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < rv.NumField(); i++ {
			if rv.Type().Field(i).IsExported() {
				if d := astDepth(rv.Field(i), depth+1); d > max {
					max = d
				}
			}
		}
	case reflect.Slice:
		for i := 0; i < rv.Len(); i++ {
			if d := astDepth(rv.Index(i), depth+1); d > max {
				max = d
			}
		}
	}
	return max
}

// countJSAssigned counts the assignments of each name: declarations,
// =, op=, ++ and --, for-in and for-of bindings.
func countJSAssigned(prog *ast.Program, into map[string]int) {
	var target func(t ast.Expression)
	target = func(t ast.Expression) {
		switch t := t.(type) {
		case *ast.Identifier:
			into[t.Name.String()]++
		case *ast.ObjectPattern:
			for _, p := range t.Properties {
				switch p := p.(type) {
				case *ast.PropertyShort:
					into[p.Name.Name.String()]++
				case *ast.PropertyKeyed:
					target(p.Value)
				}
			}
			target(t.Rest)
		case *ast.ArrayPattern:
			for _, el := range t.Elements {
				target(el)
			}
			target(t.Rest)
		case *ast.AssignExpression:
			target(t.Left)
		}
	}
	visitAST(reflect.ValueOf(prog), 0, func(n any) {
		switch n := n.(type) {
		case *ast.Binding:
			target(n.Target)
		case *ast.AssignExpression:
			target(n.Left)
		case *ast.UnaryExpression:
			if n.Operator == token.INCREMENT || n.Operator == token.DECREMENT {
				target(n.Operand)
			}
		case *ast.ForDeclaration:
			target(n.Target)
		case *ast.ForIntoExpression:
			target(n.Expression)
		}
	})
}

// collectJSDefs records the names of functions and methods defined in
// the code.
func collectJSDefs(prog *ast.Program, into map[string]bool) {
	visitAST(reflect.ValueOf(prog), 0, func(n any) {
		switch n := n.(type) {
		case *ast.FunctionLiteral:
			if n.Name != nil {
				into[n.Name.Name.String()] = true
			}
		case *ast.MethodDefinition:
			if k := staticKey(n.Key); k != "" {
				into[k] = true
			}
		case *ast.PropertyKeyed:
			switch n.Value.(type) {
			case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
				if k := staticKey(n.Key); k != "" {
					into[k] = true
				}
			}
		}
	})
}

func staticKey(k ast.Expression) string {
	switch k := k.(type) {
	case *ast.Identifier:
		return k.Name.String()
	case *ast.StringLiteral:
		return k.Value.String()
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (e *jsEval) push() { e.scopes = append(e.scopes, map[string]*value{}) }
func (e *jsEval) pop()  { e.scopes = e.scopes[:len(e.scopes)-1] }
func (e *jsEval) bind(n string, v *value) {
	e.scopes[len(e.scopes)-1][n] = v
	if e.seen != nil && len(e.seen[n]) < 50 {
		e.seen[n] = append(e.seen[n], v)
	}
}

func (e *jsEval) lookup(n string) (*value, bool) {
	for i := len(e.scopes) - 1; i >= 0; i-- {
		if v, ok := e.scopes[i][n]; ok {
			return v, true
		}
	}
	return nil, false
}

// hoist binds function declarations of a body before it runs.
func (e *jsEval) hoist(body []ast.Statement) {
	for _, st := range body {
		if f, ok := st.(*ast.FunctionDeclaration); ok && f.Function.Name != nil {
			e.bind(f.Function.Name.Name.String(), &value{k: kLocal, qual: f.Function.Name.Name.String()})
		}
		if c, ok := st.(*ast.ClassDeclaration); ok && c.Class.Name != nil {
			e.bind(c.Class.Name.Name.String(), &value{k: kLocal, qual: c.Class.Name.Name.String()})
		}
	}
}

func (e *jsEval) stmt(st ast.Statement) {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > 400 {
		e.incomplete("javascript nested too deep")
		return
	}
	switch st := st.(type) {
	case nil:
	case *ast.ExpressionStatement:
		e.use(e.expr(st.Expression))
	case *ast.VariableStatement:
		e.bindings(st.List)
	case *ast.LexicalDeclaration:
		e.bindings(st.List)
	case *ast.FunctionDeclaration:
		e.function(st.Function.ParameterList, st.Function.Body)
	case *ast.ClassDeclaration:
		e.class(st.Class)
	case *ast.BlockStatement:
		e.hoist(st.List)
		for _, s := range st.List {
			e.stmt(s)
		}
	case *ast.BadStatement:
		e.incomplete("javascript that could not be read")
	default:
		e.walk(reflect.ValueOf(st))
	}
}

func (e *jsEval) bindings(list []*ast.Binding) {
	for _, b := range list {
		v := vNone
		if b.Initializer != nil {
			v = e.expr(b.Initializer)
		}
		e.assign(b.Target, v)
	}
}

func (e *jsEval) assign(t ast.Expression, v *value) {
	switch t := t.(type) {
	case *ast.Identifier:
		e.bind(t.Name.String(), v)
	case *ast.ObjectPattern:
		// const {execSync: run} = require('child_process')
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				e.bind(p.Name.Name.String(), e.member(v, p.Name.Name.String()))
			case *ast.PropertyKeyed:
				name, ok := e.key(p.Key, p.Computed)
				if !ok {
					e.incomplete("destructuring with a computed name")
					e.assign(p.Value, vUnknown)
					continue
				}
				e.assign(p.Value, e.member(v, name))
			default:
				e.assign(p, vData)
			}
		}
		if t.Rest != nil {
			if v.k == kMod {
				e.incomplete("module %s taken apart with a rest pattern", v.qual)
			}
			e.assign(t.Rest, vData)
		}
	case *ast.ArrayPattern:
		for i, el := range t.Elements {
			ev := vData
			if v.k == kList && i < len(v.elems) {
				ev = v.elems[i]
			}
			if el != nil {
				e.assign(el, ev)
			}
		}
		if t.Rest != nil {
			e.assign(t.Rest, vData)
		}
	case *ast.AssignExpression: // a default value in a pattern
		e.expr(t.Right)
		e.assign(t.Left, v)
	case *ast.DotExpression:
		base := e.expr(t.Left)
		name := t.Identifier.Name.String()
		if e.envAssign(base, "process.env", str(name), v) {
			return
		}
		if base.k == kMod || base.k == kFunc {
			e.incomplete("assigns %s.%s", base.qual, name)
		}
		e.use(v)
	case *ast.BracketExpression:
		base := e.expr(t.Left)
		idx := e.expr(t.Member)
		if e.envAssign(base, "process.env", idx, v) {
			return
		}
		if base.k == kMod || base.k == kFunc {
			e.incomplete("assigns into %s", base.qual)
		}
		e.use(v)
	default:
		e.use(v)
		e.walk(reflect.ValueOf(t))
	}
}

func (e *jsEval) key(k ast.Expression, computed bool) (string, bool) {
	if !computed {
		switch k := k.(type) {
		case *ast.Identifier:
			return k.Name.String(), true
		case *ast.StringLiteral:
			return k.Value.String(), true
		}
	}
	return e.expr(k).known()
}

func (e *jsEval) function(params *ast.ParameterList, body ast.Node) *value {
	e.push()
	defer e.pop()
	if params != nil {
		for _, b := range params.List {
			if b.Initializer != nil {
				e.use(e.expr(b.Initializer))
			}
			e.assign(b.Target, vData)
		}
		if params.Rest != nil {
			e.assign(params.Rest, vData)
		}
	}
	switch b := body.(type) {
	case *ast.BlockStatement:
		e.stmt(b)
	case *ast.ExpressionBody:
		e.use(e.expr(b.Expression))
	}
	return &value{k: kLocal, qual: "function"}
}

func (e *jsEval) class(c *ast.ClassLiteral) *value {
	if c.SuperClass != nil {
		e.use(e.expr(c.SuperClass))
	}
	for _, el := range c.Body {
		switch el := el.(type) {
		case *ast.MethodDefinition:
			e.function(el.Body.ParameterList, el.Body.Body)
		case *ast.FieldDefinition:
			if el.Initializer != nil {
				e.use(e.expr(el.Initializer))
			}
		default:
			e.walk(reflect.ValueOf(el))
		}
	}
	return &value{k: kLocal, qual: "class"}
}

// use checks a value handed on where it is not followed.
func (e *jsEval) use(v *value) {
	e.handedOn(v, jsCategory, func(m string) bool { return jsHarmlessModule[m] })
}

// walk evaluates every expression and statement inside a node it has
// no rule for.
func (e *jsEval) walk(rv reflect.Value) {
	if !rv.IsValid() {
		return
	}
	if rv.Kind() == reflect.Interface || rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return
		}
		if rv.CanInterface() {
			switch n := rv.Interface().(type) {
			case *ast.Binding:
				e.bindings([]*ast.Binding{n})
				return
			case *ast.ForIntoVar:
				e.bindings([]*ast.Binding{n.Binding})
				return
			case *ast.ForDeclaration:
				e.assign(n.Target, vData)
				return
			case *ast.ForLoopInitializerLexicalDecl:
				e.bindings(n.LexicalDeclaration.List)
				return
			case *ast.ForLoopInitializerVarDeclList:
				e.bindings(n.List)
				return
			case *ast.CatchStatement:
				if n.Parameter != nil {
					e.assign(n.Parameter, vData)
				}
				e.stmt(n.Body)
				return
			case *ast.LabelledStatement:
				e.stmt(n.Statement)
				return
			case *ast.BranchStatement, *ast.EmptyStatement, *ast.DebuggerStatement:
				return
			case *ast.WithStatement:
				e.incomplete("with statement (names resolved at run time)")
				e.use(e.expr(n.Object))
				e.stmt(n.Body)
				return
			case ast.Statement:
				if !isWalkOnly(n) {
					e.stmt(n)
					return
				}
			case ast.Expression:
				e.use(e.expr(n))
				return
			}
		}
		e.walk(rv.Elem())
		return
	}
	switch rv.Kind() {
	case reflect.Struct:
		for i := 0; i < rv.NumField(); i++ {
			if rv.Type().Field(i).IsExported() {
				e.walk(rv.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < rv.Len(); i++ {
			e.walk(rv.Index(i))
		}
	}
}

// isWalkOnly reports statements that stmt hands to walk (no rule of
// their own), which walk must open rather than hand back.
func isWalkOnly(st ast.Statement) bool {
	switch st.(type) {
	case *ast.ExpressionStatement, *ast.VariableStatement, *ast.LexicalDeclaration, *ast.FunctionDeclaration,
		*ast.ClassDeclaration, *ast.BlockStatement, *ast.BadStatement:
		return false
	}
	return true
}

func (e *jsEval) expr(x ast.Expression) *value {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > 400 {
		e.incomplete("javascript nested too deep")
		return vUnknown
	}
	switch x := x.(type) {
	case nil:
		return vNone
	case *ast.StringLiteral:
		return str(x.Value.String())
	case *ast.NumberLiteral:
		switch n := x.Value.(type) {
		case int64:
			return num(n)
		case float64:
			if n == float64(int64(n)) {
				return num(int64(n))
			}
		}
		return vData
	case *ast.BooleanLiteral, *ast.NullLiteral, *ast.RegExpLiteral, *ast.ThisExpression:
		return vData
	case *ast.TemplateLiteral:
		if x.Tag != nil {
			tag := e.expr(x.Tag)
			if !(tag.k == kFunc && tag.qual == "String.raw") {
				e.incomplete("tagged template")
			}
		}
		var parts []*value
		for i, el := range x.Elements {
			parts = append(parts, str(el.Parsed.String()))
			if i < len(x.Expressions) {
				v := e.expr(x.Expressions[i])
				e.use(v)
				parts = append(parts, v.asStr())
			}
		}
		return concat(parts...)
	case *ast.Identifier:
		return e.name(x.Name.String())
	case *ast.DotExpression:
		return e.member(e.expr(x.Left), x.Identifier.Name.String())
	case *ast.BracketExpression:
		base := e.expr(x.Left)
		idx := e.expr(x.Member)
		if s, ok := idx.known(); ok && (base.k == kMod || base.k == kFunc || base.k == kObj) {
			return e.member(base, s)
		}
		switch base.k {
		case kMod, kFunc, kObj:
			e.incomplete("member of %s with a name computed at run time", base.qual)
			return vUnknown
		case kList:
			if idx.k == kNum && idx.n >= 0 && int(idx.n) < len(base.elems) {
				return base.elems[idx.n]
			}
			e.use(base)
		case kDict:
			if s, ok := idx.known(); ok {
				for i, k := range base.keys {
					if k == s {
						return base.elems[i]
					}
				}
			}
			e.use(base)
		case kStr:
			return dynStr()
		}
		return vData
	case *ast.CallExpression:
		return e.call(x.Callee, x.ArgumentList, false)
	case *ast.NewExpression:
		return e.call(x.Callee, x.ArgumentList, true)
	case *ast.BinaryExpression:
		a, b := e.expr(x.Left), e.expr(x.Right)
		if x.Operator == token.PLUS && (a.k == kStr || b.k == kStr) {
			return concat(a, b)
		}
		if a.k == kNum && b.k == kNum && x.Operator == token.PLUS {
			return num(a.n + b.n)
		}
		if x.Operator == token.LOGICAL_OR || x.Operator == token.LOGICAL_AND || x.Operator == token.COALESCE {
			if a.k == kStr || b.k == kStr {
				return dynStr()
			}
		}
		e.use(a)
		e.use(b)
		return vData
	case *ast.AssignExpression:
		v := e.expr(x.Right)
		if x.Operator == token.PLUS {
			v = concat(e.expr(x.Left), v)
		} else if x.Operator != token.ASSIGN {
			e.use(v)
			v = vData
		}
		e.assign(x.Left, v)
		return v
	case *ast.ConditionalExpression:
		e.use(e.expr(x.Test))
		a, b := e.expr(x.Consequent), e.expr(x.Alternate)
		if a.k == kStr || b.k == kStr {
			return dynStr()
		}
		e.use(a)
		e.use(b)
		return vData
	case *ast.UnaryExpression:
		v := e.expr(x.Operand)
		if x.Operator == token.MINUS && v.k == kNum {
			return num(-v.n)
		}
		if x.Operator == token.DELETE || x.Operator == token.TYPEOF || x.Operator == token.VOID {
			return vData
		}
		e.use(v)
		return vData
	case *ast.SequenceExpression:
		var last *value = vNone
		for _, s := range x.Sequence {
			last = e.expr(s)
		}
		return last
	case *ast.ArrayLiteral:
		return &value{k: kList, elems: e.spread(x.Value)}
	case *ast.ObjectLiteral:
		out := &value{k: kDict}
		for _, p := range x.Value {
			switch p := p.(type) {
			case *ast.PropertyKeyed:
				name, ok := e.key(p.Key, p.Computed)
				if !ok {
					name = "*"
				}
				v := e.expr(p.Value)
				out.keys = append(out.keys, name)
				out.elems = append(out.elems, v)
			case *ast.PropertyShort:
				out.keys = append(out.keys, p.Name.Name.String())
				out.elems = append(out.elems, e.name(p.Name.Name.String()))
			case *ast.SpreadElement:
				e.use(e.expr(p.Expression))
			default:
				e.walk(reflect.ValueOf(p))
			}
		}
		return out
	case *ast.FunctionLiteral:
		return e.function(x.ParameterList, x.Body)
	case *ast.ArrowFunctionLiteral:
		return e.function(x.ParameterList, x.Body)
	case *ast.ClassLiteral:
		return e.class(x)
	case *ast.AwaitExpression:
		return e.expr(x.Argument)
	case *ast.YieldExpression:
		e.use(e.expr(x.Argument))
		return vData
	case *ast.OptionalChain:
		return e.expr(x.Expression)
	case *ast.Optional:
		return e.expr(x.Expression)
	case *ast.SpreadElement:
		return e.expr(x.Expression)
	case *ast.BadExpression:
		e.incomplete("javascript that could not be read")
		return vUnknown
	case *ast.MetaProperty, *ast.PrivateDotExpression, *ast.SuperExpression:
		return vData
	}
	e.walk(reflect.ValueOf(x))
	return vData
}

// name resolves an identifier: a binding, or a global of the
// vocabulary.
func (e *jsEval) name(n string) *value {
	if v, ok := e.lookup(n); ok {
		if e.assigned[n] > 1 {
			return e.unstableValue(n, v, e.prior[n], func(q string) bool { return jsCategory(q) == catHarmless || jsHarmlessModule[q] })
		}
		return v
	}
	switch n {
	case "undefined", "NaN", "Infinity":
		return vData
	case "require":
		return fn("require")
	case "eval", "Function":
		return fn(n)
	case "__dirname", "__filename":
		return dynStr()
	}
	if jsGlobals[n] {
		return mod(n)
	}
	if jsCategory(n) != catUnknown {
		return fn(n)
	}
	e.incomplete("unknown name %s", n)
	return vUnknown
}

func (e *jsEval) member(base *value, name string) *value {
	switch name {
	case "__proto__", "constructor", "prototype", "__defineGetter__", "__lookupGetter__":
		if base.k != kLocal {
			e.incomplete("special property %s", name)
			return vUnknown
		}
	}
	switch base.k {
	case kUnknown:
		return vUnknown
	case kMod, kFunc:
		q := base.qual + "." + name
		if q == "process.env.HOME" {
			return str("~")
		}
		switch jsCategory(q) {
		case catUnknown:
			if jsCategory(base.qual) == catHarmless || base.k == kMod && jsHarmlessModule[base.qual] {
				return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": base}}
			}
			e.incomplete("unknown %s", q)
			return vUnknown
		case catModule:
			return mod(q)
		}
		return fn(q)
	case kObj:
		q := base.qual + "." + name
		if jsCategory(q) == catUnknown && jsDataMethods[name] {
			return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": dynStr()}}
		}
		return &value{k: kFunc, qual: q, fields: map[string]*value{"self": base}}
	case kLocal:
		if e.locals[name] {
			return &value{k: kLocal, qual: "member"}
		}
		if jsDataMethods[name] {
			return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": vData}}
		}
		return vData // a field of the code's own object
	case kDict:
		for i, k := range base.keys {
			if k == name {
				return base.elems[i]
			}
		}
	}
	if name == "length" {
		if s, ok := base.known(); ok {
			return num(int64(len(s)))
		}
	}
	return &value{k: kFunc, qual: "data." + name, fields: map[string]*value{"self": base}}
}

// spread evaluates the elements of an array literal or the arguments of
// a call: a spread list (...xs) stands for its elements, a spread of
// anything else for one element of data (the value is handed on).
func (e *jsEval) spread(list []ast.Expression) []*value {
	var out []*value
	for _, el := range list {
		if sp, ok := el.(*ast.SpreadElement); ok {
			v := e.expr(sp.Expression)
			if v.k == kList {
				out = append(out, v.elems...)
			} else {
				e.use(v)
				out = append(out, vData)
			}
			continue
		}
		out = append(out, e.expr(el))
	}
	return out
}

func (e *jsEval) call(callee ast.Expression, argList []ast.Expression, isNew bool) *value {
	f := e.expr(callee)
	c := &call{kw: map[string]*value{}, args: e.spread(argList)}
	switch f.k {
	case kUnknown:
		return vUnknown
	case kLocal:
		for _, a := range c.args {
			e.use(a)
		}
		return &value{k: kLocal, qual: "result"}
	case kFunc:
	case kMod:
		if jsCategory(f.qual) == catHarmless || jsHarmlessModule[f.qual] {
			for _, a := range c.args {
				e.use(a)
			}
			return vData
		}
		e.incomplete("call of %s, whose effects are not known", f.qual)
		return vUnknown
	default:
		e.incomplete("call of a value computed at run time")
		return vUnknown
	}
	c.name, c.self = f.qual, f.fields["self"]
	// Options objects carry keyword-like arguments.
	for _, a := range c.args {
		if a.k == kDict {
			for i, k := range a.keys {
				if _, ok := c.kw[k]; !ok {
					c.kw[k] = a.elems[i]
				}
			}
		}
	}
	switch c.name {
	case "require":
		name, ok := c.arg(0, "").known()
		if !ok {
			e.incomplete("require of a module named at run time")
			return vUnknown
		}
		name = strings.TrimPrefix(name, "node:")
		if jsModules[name] || jsHarmlessModule[name] {
			return mod(name)
		}
		e.incomplete("requires module %s, whose effects are not known", name)
		return vUnknown
	case "eval", "Function", "vm.runInThisContext", "vm.runInNewContext", "vm.runInContext", "vm.Script", "vm.compileFunction", "setTimeout", "setInterval", "setImmediate":
		var src *value
		if len(c.args) > 0 {
			src = c.args[len(c.args)-1]
			if c.name == "eval" || strings.HasPrefix(c.name, "set") || strings.HasPrefix(c.name, "vm.") {
				src = c.args[0]
			}
		}
		if strings.HasPrefix(c.name, "set") && src != nil && src.k != kStr {
			for _, a := range c.args {
				e.use(a)
			}
			return vData
		}
		lit, ok := src.known()
		if !ok {
			e.find(ClassEval, Dangerous, "evaluates code built at run time")
			e.incomplete("%s of code built at run time", c.name)
			return vUnknown
		}
		if c.name == "Function" {
			lit = "(function(){" + lit + "\n})"
		}
		e.nested(func() { runJS(e.state, lit) })
		return &value{k: kLocal, qual: "result"}
	}
	if strings.HasPrefix(c.name, "data.") {
		return e.dataMethod(c)
	}
	if ef, ok := jsEffects[c.name]; ok {
		return ef(e.state, c)
	}
	if jsCategory(c.name) == catHarmless {
		for _, a := range c.args {
			e.use(a)
		}
		return vData
	}
	e.incomplete("call of %s, whose effects are not known", c.name)
	return vUnknown
}

func (e *jsEval) dataMethod(c *call) *value {
	m, self, v := e.dataReceiver(c, jsDataMethods, func(a *value) {
		if a.k != kLocal {
			e.use(a)
		}
	})
	if v != nil {
		return v
	}
	switch m {
	case "toString":
		if self.k == kObj && self.qual == "buffer" {
			return self.fields["text"]
		}
		return self.asStr()
	case "join":
		if self.k == kList {
			sep := ","
			if len(c.args) > 0 {
				s, ok := c.args[0].known()
				if !ok {
					return dynStr()
				}
				sep = s
			}
			return joined(self.elems, sep)
		}
	case "split":
		if s, ok := self.known(); ok && len(c.args) > 0 {
			if sep, ok := c.args[0].known(); ok {
				out := &value{k: kList}
				for _, p := range strings.Split(s, sep) {
					out.elems = append(out.elems, str(p))
				}
				return out
			}
		}
		return vData
	case "reverse":
		if self.k == kList {
			out := &value{k: kList}
			for i := len(self.elems) - 1; i >= 0; i-- {
				out.elems = append(out.elems, self.elems[i])
			}
			return out
		}
	case "replace", "replaceAll":
		if k, ok := knownAll(self, c.arg(0, ""), c.arg(1, "")); ok {
			if m == "replace" {
				return str(strings.Replace(k[0], k[1], k[2], 1))
			}
			return str(strings.ReplaceAll(k[0], k[1], k[2]))
		}
		return dynStr()
	case "toUpperCase", "toLowerCase", "trim", "concat":
		if s, ok := self.known(); ok {
			switch m {
			case "toUpperCase":
				return str(strings.ToUpper(s))
			case "toLowerCase":
				return str(strings.ToLower(s))
			case "trim":
				return str(strings.TrimSpace(s))
			case "concat":
				return concat(append([]*value{self}, c.args...)...)
			}
		}
		return dynStr()
	case "then", "catch", "finally":
		return &value{k: kLocal, qual: "result"}
	}
	if self.k == kStr {
		return dynStr()
	}
	return vData
}

// decodeBase64JS folds Buffer.from(lit, 'base64') and atob(lit).
func decodeBase64JS(s *state, c *call) *value {
	lit, ok := c.arg(0, "").known()
	enc, _ := c.arg(1, "").known()
	if c.name == "Buffer.from" && !strings.Contains(enc, "base64") && enc != "hex" {
		if ok {
			return obj("buffer", map[string]*value{"text": str(lit)})
		}
		return obj("buffer", map[string]*value{"text": dynStr()})
	}
	if ok {
		if enc == "hex" {
			return obj("buffer", map[string]*value{"text": hexdecode(s, c)})
		}
		for _, en := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := en.DecodeString(strings.TrimSpace(lit)); err == nil {
				if c.name == "atob" {
					return str(string(b))
				}
				return obj("buffer", map[string]*value{"text": str(string(b))})
			}
		}
	}
	if c.name == "atob" {
		return dynStr()
	}
	return obj("buffer", map[string]*value{"text": dynStr()})
}
