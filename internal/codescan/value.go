package codescan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The evaluators of Python and JavaScript share one model of values and
// one record of effects.

type kind uint8

const (
	kUnknown kind = iota // something already reported as not understood
	kData                // data whose value is not known (harmless to hold)
	kStr                 // a string, possibly with parts known only at run time
	kNum                 // a known integer
	kList                // a list or tuple
	kDict                // a dict or object literal
	kMod                 // a module
	kFunc                // a function or attribute named by a qualified name
	kObj                 // an object of a known class (a file, a path, a socket)
	kLocal               // a function or class defined in the code
	kNone                // None, null, undefined
)

// part is a piece of a string: literal text, or a run-time hole.
type part struct {
	lit string
	dyn bool
	// src, for a run-time part, is the command whose output it is (the
	// content of a file the code read: "cat -- PATH"), so a secret read
	// and then sent is seen by the shell analyser as what it is.
	src string
}

type value struct {
	k      kind
	parts  []part // kStr
	n      int64  // kNum
	elems  []*value
	keys   []string // kDict: keys of elems, in order
	qual   string   // kMod, kFunc, kObj (class), kLocal (name)
	fields map[string]*value
}

var (
	vUnknown = &value{k: kUnknown}
	vData    = &value{k: kData}
	vNone    = &value{k: kNone}
)

func str(s string) *value { return &value{k: kStr, parts: []part{{lit: s}}} }
func num(n int64) *value  { return &value{k: kNum, n: n} }
func fn(q string) *value  { return &value{k: kFunc, qual: q} }
func mod(q string) *value { return &value{k: kMod, qual: q} }
func obj(class string, f map[string]*value) *value {
	return &value{k: kObj, qual: class, fields: f}
}

// dynStr is a string known only at run time.
func dynStr() *value { return &value{k: kStr, parts: []part{{dyn: true}}} }

// known returns the string's value when it has no run-time parts.
func (v *value) known() (string, bool) {
	if v == nil || v.k != kStr {
		return "", false
	}
	var b strings.Builder
	for _, p := range v.parts {
		if p.dyn {
			return "", false
		}
		b.WriteString(p.lit)
	}
	return b.String(), true
}

// asStr turns a value into a string value (numbers formatted, anything
// else a run-time hole).
func (v *value) asStr() *value {
	switch {
	case v == nil:
		return dynStr()
	case v.k == kStr:
		return v
	case v.k == kNum:
		return str(strconv.FormatInt(v.n, 10))
	}
	return dynStr()
}

// handedOn checks a value handed on where the walk does not follow it:
// a function that is not harmless (by its language's category) or a
// module that is not (moduleOK) cannot be followed to where it is
// called, so the code is incomplete; a list's or dict's elements are
// checked in turn.
func (s *state) handedOn(v *value, category func(string) category, moduleOK func(string) bool) {
	if v == nil {
		return
	}
	switch v.k {
	case kFunc:
		if !strings.HasPrefix(v.qual, "data.") && category(v.qual) != catHarmless {
			s.incomplete("%s is passed on as a value", v.qual)
		}
	case kMod:
		if !moduleOK(v.qual) {
			s.incomplete("module %s is passed on as a value", v.qual)
		}
	case kList, kDict:
		for _, x := range v.elems {
			s.handedOn(x, category, moduleOK)
		}
	}
}

// envAssign reads an assignment of v to base[key] where base is the
// process environment (environ names it: os.environ, process.env): an
// export, as the shell would run it. It reports whether base was the
// environment.
func (s *state) envAssign(base *value, environ string, key, v *value) bool {
	if base.k != kFunc || base.qual != environ {
		return false
	}
	s.command("export " + s.word(concat(key.asStr(), str("="), v.asStr())))
	return true
}

// dataReceiver reads a method call on data (c.name is "data.METHOD"):
// it hands each argument to use, and returns the method and its
// receiver, to fold. When there is nothing to fold
// it returns the call's value instead: vUnknown for a method not in
// known, whose effects are not known (the code is incomplete), and vData
// for a call without a receiver.
func (s *state) dataReceiver(c *call, known map[string]bool, use func(*value)) (m string, self, v *value) {
	for _, a := range c.args {
		use(a)
	}
	m = strings.TrimPrefix(c.name, "data.")
	if !known[m] {
		s.incomplete("method .%s, whose effects are not known", m)
		return m, nil, vUnknown
	}
	if c.self == nil {
		return m, nil, vData
	}
	return m, c.self, nil
}

// joined is elems with sep between each two, as str.join and
// Array.prototype.join fold them.
func joined(elems []*value, sep string) *value {
	var parts []*value
	for i, x := range elems {
		if i > 0 {
			parts = append(parts, str(sep))
		}
		parts = append(parts, x)
	}
	return concat(parts...)
}

// knownAll returns the strings of vs when every one is known.
func knownAll(vs ...*value) ([]string, bool) {
	out := make([]string, len(vs))
	for i, v := range vs {
		s, ok := v.known()
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func concat(vs ...*value) *value {
	out := &value{k: kStr}
	for _, v := range vs {
		for _, p := range v.asStr().parts {
			if n := len(out.parts); n > 0 && !p.dyn && !out.parts[n-1].dyn {
				out.parts[n-1].lit += p.lit
				continue
			}
			out.parts = append(out.parts, p)
		}
	}
	return out
}

// state is one analysis: what was found, and the numbering of run-time
// holes.
type state struct {
	lang     string
	commands []string
	findings []Finding
	reasons  []string
	reads    []string
	dyn      int
	depth    int // nesting of expressions being evaluated
	nest     int // nesting of code read from literals (eval, exec)
	// learning is set on the first of the two walks, which only learns
	// what names are given: code read from literals is read by the
	// second walk alone, so nesting costs two walks per level, not two
	// to the power of the levels.
	learning bool
}

// maxNest bounds eval-of-a-literal nesting.
const maxNest = 8

// nested runs f on code read from a literal, one level deeper.
func (s *state) nested(f func()) {
	if s.learning {
		return
	}
	if s.nest >= maxNest {
		s.incomplete("code evaluated from code nested more than %d deep", maxNest)
		return
	}
	s.nest++
	defer func() { s.nest-- }()
	f()
}

func (s *state) incomplete(format string, args ...any) {
	r := fmt.Sprintf(format, args...)
	for _, x := range s.reasons {
		if x == r {
			return
		}
	}
	if len(s.reasons) < 20 {
		s.reasons = append(s.reasons, r)
	}
}

func (s *state) find(class string, tier Tier, desc string) {
	for _, f := range s.findings {
		if f.Class == class && f.Description == desc {
			return
		}
	}
	s.findings = append(s.findings, Finding{Class: class, Tier: tier, Description: desc})
}

func (s *state) command(c string) {
	if len(s.commands) < 200 {
		s.commands = append(s.commands, c)
	}
}

func (s *state) result() Result {
	return Result{Language: s.lang, Complete: len(s.reasons) == 0, Commands: s.commands, Findings: s.findings, Reasons: s.reasons, Reads: s.reads}
}

// hole returns the next run-time expansion, "$__dynN".
func (s *state) hole() string {
	s.dyn++
	return "$__dyn" + strconv.Itoa(s.dyn)
}

// word renders a value as one shell word: literal parts quoted, holes as
// "$__dynN" in double quotes.
func (s *state) word(v *value) string {
	sv := v.asStr()
	var b strings.Builder
	for i, p := range sv.parts {
		if p.dyn {
			if p.src != "" {
				b.WriteString(`"$(` + p.src + `)"`)
				continue
			}
			b.WriteString(`"` + s.hole() + `"`)
			continue
		}
		lit := p.lit
		// A leading ~ names the home directory, as in the code that
		// expanded it: it stays unquoted.
		if i == 0 && (lit == "~" || strings.HasPrefix(lit, "~/")) {
			b.WriteString("~")
			lit = lit[1:]
			if lit == "" {
				continue
			}
		}
		b.WriteString(quote(lit))
	}
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
}

// line renders a value as a shell command line: literal text as is,
// holes as bare expansions. A line with holes is also incomplete: text
// spliced in at run time can carry shell syntax no analysis sees.
func (s *state) line(v *value, what string) string {
	sv := v.asStr()
	var b strings.Builder
	for _, p := range sv.parts {
		if p.dyn {
			if p.src != "" {
				b.WriteString("$(" + p.src + ")")
				continue
			}
			b.WriteString(s.hole())
			continue
		}
		b.WriteString(p.lit)
	}
	if _, ok := sv.known(); !ok {
		s.incomplete("%s runs a command line built at run time", what)
	}
	return b.String()
}

// argv renders a list of values as a command line of quoted words.
func (s *state) argv(vs []*value) string {
	w := make([]string, len(vs))
	for i, v := range vs {
		w[i] = s.word(v)
	}
	return strings.Join(w, " ")
}

func quote(s string) string {
	if s == "" {
		return "''"
	}
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil { // NUL bytes: bash cannot pass them either
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, "\x00", ""), "'", `'\''`) + "'"
	}
	return q
}

// sortedKeys is for deterministic output over maps.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pathJoin joins path parts as os.path.join and path.join do: a part
// that starts with / starts over.
func pathJoin(parts []*value) *value {
	var out []*value
	for _, p := range parts {
		ps := p.asStr()
		if lit, ok := ps.known(); ok && strings.HasPrefix(lit, "/") {
			out = nil
		}
		if len(out) > 0 {
			out = append(out, str("/"))
		}
		out = append(out, ps)
	}
	if len(out) == 0 {
		return dynStr()
	}
	return concat(out...)
}
