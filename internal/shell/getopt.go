package shell

import (
	"sort"
	"strings"
	"sync"
)

// One option model for every program the analyser reads: what getopt_long
// (and git's parse-options, Go's pflag, Python's argparse) would make of an
// argv. A program's options are data (an optSpec, written with spec);
// parsing them is this file's job alone, so every launcher and every
// classified tool reads bundled short options (-rf), value-taking short
// options with the value attached or in the next word (-n5, -n 5),
// long options with "=value" or the next word, unique-prefix
// abbreviations of long options (--recur for --recursive), "--" as the end
// of options, and options after operands (GNU permutation) exactly alike.

// optArg says whether an option takes a value.
type optArg uint8

const (
	argNone     optArg = iota
	argRequired        // -n 5, -n5, --lines 5, --lines=5
	argOptional        // attached only: -i.bak, --backup=numbered
)

// optDef is one option: its names (single letters are short options) and
// whether it takes a value.
type optDef struct {
	names []string
	arg   optArg
	// n is how many words a required value takes (bwrap --bind SRC
	// DEST): 1 unless the def ends in several "=".
	n int
	// stop: the option ends option parsing ("=!": python -c CODE, -m
	// MODULE; what follows belongs to the program).
	stop bool
	// digits: an optional value is only the digits attached ("?#":
	// perl -l, -0).
	digits bool
}

// optStyle are how a program departs from GNU getopt_long.
type optStyle uint8

const (
	// stopAtOperand: options end at the first operand (getopt's "+",
	// what launchers do: the operand is the command).
	stopAtOperand optStyle = 1 << iota
	// noAbbrev: long options must be spelled in full (Go's pflag: docker,
	// kubectl, terraform…).
	noAbbrev
	// singleDash: long options may be written with one dash (-chdir=x,
	// -name), tried before short bundles.
	singleDash
	// negatable: --no-NAME turns NAME off (git).
	negatable
	// numeric: -NUM is an option with a value (nice -10, head -20).
	numeric
	// lenient: every word that starts with a dash is an option, its
	// value attached (--tool=memcheck, -v): programs whose options never
	// take the next word (valgrind, firejail). Nothing is unknown.
	lenient
)

// styleLetters are the letters of a spec's flags string (see spec).
var styleLetters = map[rune]optStyle{
	'+': stopAtOperand, '!': noAbbrev, '-': singleDash, 'n': negatable, '#': numeric, 'L': lenient,
}

// optSpec is how one program reads its options. It is built on first
// use (see data): the analyser knows several hundred programs, and
// building every table when the package loaded was most of the start-up
// time of any binary that links it (the hook's among them).
type optSpec struct {
	flags string
	raw   []string
	once  sync.Once
	d     specData
}

// specData is an optSpec's tables.
type specData struct {
	defs  []optDef
	style optStyle
	short [128]int16 // 1 + index in defs, by letter
	long  map[string]int16
	names []string // long names, sorted, for abbreviations
}

// data returns the spec's tables, building them the first time.
func (s *optSpec) data() *specData {
	s.once.Do(s.build)
	return &s.d
}

// spec builds an optSpec. flags is a string of style letters: "+"
// stopAtOperand, "!" noAbbrev, "-" singleDash, "n" negatable, "#"
// numeric, "L" lenient (styleLetters). Each def is "a|b|long" with "=" appended when the option takes
// a value and "?" when the value is optional (attached only).
func spec(flags string, defs ...string) *optSpec {
	return &optSpec{flags: flags, raw: defs}
}

// build makes the tables of s from its flags and defs.
func (sp *optSpec) build() {
	flags, defs := sp.flags, sp.raw
	s := &sp.d
	s.long = map[string]int16{}
	for _, f := range flags {
		s.style |= styleLetters[f]
	}
	for _, d := range defs {
		arg, n := argNone, 0
		stop, digits := false, false
		if strings.HasSuffix(d, "=!") {
			stop, d = true, d[:len(d)-1]
		}
		if strings.HasSuffix(d, "?#") {
			digits, d = true, d[:len(d)-1]
		}
		switch {
		case strings.HasSuffix(d, "="):
			arg = argRequired
			for strings.HasSuffix(d, "=") {
				d, n = d[:len(d)-1], n+1
			}
		case strings.HasSuffix(d, "?"):
			arg, d = argOptional, d[:len(d)-1]
		}
		def := optDef{names: strings.Split(d, "|"), arg: arg, n: n, stop: stop, digits: digits}
		s.defs = append(s.defs, def)
		id := int16(len(s.defs))
		for _, n := range def.names {
			if len(n) == 1 && n[0] < 128 {
				s.short[n[0]] = id
				continue
			}
			s.long[n] = id
			s.names = append(s.names, n)
		}
	}
	sort.Strings(s.names)
}

// with returns a copy of s with more options (a subcommand's own added
// to the global ones, say).
func (sp *optSpec) with(flags string, defs ...string) *optSpec {
	s := sp.data()
	var all []string
	for _, d := range s.defs {
		n := strings.Join(d.names, "|")
		switch d.arg {
		case argRequired:
			n += strings.Repeat("=", d.n)
			if d.stop {
				n += "!"
			}
		case argOptional:
			n += "?"
			if d.digits {
				n += "#"
			}
		}
		all = append(all, n)
	}
	return spec(flags+styleFlags(s.style), append(all, defs...)...)
}

func styleFlags(st optStyle) string {
	var b strings.Builder
	for _, x := range []struct {
		s optStyle
		c byte
	}{{stopAtOperand, '+'}, {noAbbrev, '!'}, {singleDash, '-'}, {negatable, 'n'}, {numeric, '#'}, {lenient, 'L'}} {
		if st&x.s != 0 {
			b.WriteByte(x.c)
		}
	}
	return b.String()
}

// lookupLong resolves a long option name: exact, or (unless noAbbrev) the
// one option it is a unique prefix of. ambiguous is set when several
// options share the prefix.
func (sp *optSpec) lookupLong(name string) (id int16, ambiguous bool) {
	s := sp.data()
	if id, ok := s.long[name]; ok {
		return id, false
	}
	if s.style&noAbbrev != 0 || name == "" {
		return 0, false
	}
	i := sort.SearchStrings(s.names, name)
	for ; i < len(s.names) && strings.HasPrefix(s.names[i], name); i++ {
		cand := s.long[s.names[i]]
		switch {
		case id == 0:
			id = cand
		case id != cand:
			return 0, true
		}
	}
	return id, false
}

// optHit is one option found in an argv.
type optHit struct {
	def    int16 // 1 + index in spec.defs
	at     int   // index in args of the word holding the option
	val    Arg   // its value, when it has one
	hasVal bool
	neg    bool // --no-NAME
}

// opts is an argv read by an optSpec.
type opts struct {
	spec *optSpec
	hits []optHit
	// operands are the words that are not options, in order (with
	// everything after "--").
	operands []Arg
	// end is the index of the first operand when the spec stops there
	// (a launcher's command), else len(args).
	end int
	// unknown are the indexes of words that look like options the spec
	// does not know (or abbreviate ambiguously).
	unknown []int
	// dashdash is the index of "--", or -1.
	dashdash int
	// opEnd is where operands end in args while they are one slice of
	// it (see addOperands); -1 once they are a copy.
	opEnd int
}

// hit records an option found; the first makes room for a few, most
// argvs' options fitting in one allocation.
func (p *opts) hit(h optHit) {
	if p.hits == nil {
		p.hits = make([]optHit, 0, 4)
	}
	p.hits = append(p.hits, h)
}

// addOperands adds args[lo:hi] to the operands. While the operands
// are contiguous in args (most argvs: options, then operands) they are a
// slice of it, capacity-limited so that an append by a caller copies;
// otherwise a copy. The analysis never writes into an argv it has built.
func (p *opts) addOperands(args []Arg, lo, hi int) {
	switch {
	case lo >= hi:
	case p.operands == nil && p.opEnd >= 0:
		p.operands, p.opEnd = args[lo:hi:hi], hi
	case p.opEnd == lo:
		p.operands, p.opEnd = args[lo-len(p.operands):hi:hi], hi
	default:
		p.operands, p.opEnd = append(p.operands, args[lo:hi]...), -1
	}
}

// parseOpts reads args[from:] with s.
func parseOpts(sp *optSpec, args []Arg, from int) opts {
	p := opts{spec: sp, end: len(args), dashdash: -1}
	s := sp.data()
	for i := from; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case v == "--" && a.Static:
			p.dashdash = i
			if s.style&stopAtOperand != 0 {
				p.end = i + 1
				p.addOperands(args, i+1, len(args))
				return p
			}
			p.addOperands(args, i+1, len(args))
			return p
		case len(v) < 2 || v[0] != '-' || !a.Static && !strings.HasPrefix(v, "-"):
			if s.style&stopAtOperand != 0 {
				p.end = i
				p.addOperands(args, i, len(args))
				return p
			}
			p.addOperands(args, i, i+1)
		case s.style&lenient != 0:
			p.hit(optHit{def: 0, at: i, val: a}) // the word itself, for describe
		case strings.HasPrefix(v, "--"):
			i = p.longOpt(args, i, v[2:])
		case s.style&singleDash != 0 && p.singleDashLong(args, &i):
		default:
			i = p.shortOpts(args, i)
		}
		if n := len(p.hits); n > 0 && p.hits[n-1].def > 0 && s.defs[p.hits[n-1].def-1].stop && p.hits[n-1].at >= i-1 {
			p.end = i + 1
			p.addOperands(args, i+1, len(args))
			return p
		}
	}
	return p
}

// longOpt reads --name, --name=value or --name value at args[i] and
// returns the index of the last word it used.
func (p *opts) longOpt(args []Arg, i int, body string) int {
	s := p.spec.data()
	name, val, hasVal := strings.Cut(body, "=")
	id, ambiguous := p.spec.lookupLong(name)
	neg := false
	if id == 0 && !ambiguous && s.style&negatable != 0 && strings.HasPrefix(name, "no-") {
		id, _ = p.spec.lookupLong(name[3:])
		neg = id != 0
	}
	if id == 0 {
		p.unknown = append(p.unknown, i)
		return i
	}
	h := optHit{def: id, at: i, neg: neg}
	switch d := s.defs[id-1]; d.arg {
	case argRequired:
		switch {
		case hasVal:
			h.val, h.hasVal = sub(args[i], len(args[i].Value)-len(val)), true
		case i+1 < len(args):
			i++
			h.val, h.hasVal = args[i], true
			i = min(i+d.n-1, len(args)-1) // the further words of a value
		}
	case argOptional:
		if hasVal {
			h.val, h.hasVal = sub(args[i], len(args[i].Value)-len(val)), true
		}
	}
	p.hit(h)
	return i
}

// singleDashLong reads -name[=value] as a long option when the spec
// allows one dash and name is a long option (not abbreviated).
func (p *opts) singleDashLong(args []Arg, i *int) bool {
	body := args[*i].Value[1:]
	name, _, _ := strings.Cut(body, "=")
	if _, ok := p.spec.data().long[name]; !ok {
		return false
	}
	*i = p.longOpt(args, *i, body)
	return true
}

// shortOpts reads a bundle -abc at args[i], a value-taking option taking
// the rest of the word or the next word.
func (p *opts) shortOpts(args []Arg, i int) int {
	s := p.spec.data()
	v := args[i].Value
	if s.style&numeric != 0 && isDigits(v[1:]) {
		p.hit(optHit{def: -1, at: i, val: sub(args[i], 1), hasVal: true})
		return i
	}
	for j := 1; j < len(v); j++ {
		c := v[j]
		var id int16
		if c < 128 {
			id = s.short[c]
		}
		if id == 0 {
			p.unknown = append(p.unknown, i)
			return i
		}
		h := optHit{def: id, at: i}
		switch s.defs[id-1].arg {
		case argRequired:
			switch {
			case j+1 < len(v):
				h.val, h.hasVal = sub(args[i], j+1), true
			case i+1 < len(args):
				i++
				h.val, h.hasVal = args[i], true
			}
			p.hit(h)
			return i
		case argOptional:
			if s.defs[id-1].digits {
				k := j + 1
				for k < len(v) && (v[k] >= '0' && v[k] <= '9' || v[k] == 'x' || v[k] >= 'a' && v[k] <= 'f' && c == '0') {
					k++
				}
				if k > j+1 {
					h.val, h.hasVal = sub(args[i], j+1), true
					h.val.Value = v[j+1 : k]
				}
				p.hit(h)
				j = k - 1
				continue
			}
			if j+1 < len(v) {
				h.val, h.hasVal = sub(args[i], j+1), true
			}
			p.hit(h)
			return i
		}
		p.hit(h)
	}
	return i
}

// sub returns the part of a word from byte from on, as an Arg of its own.
func sub(a Arg, from int) Arg {
	out := a
	out.Value = a.Value[from:]
	if a.off > 0 {
		out.off = a.off + int32(from)
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// id returns the def index of an option name, or 0.
func (sp *optSpec) id(name string) int16 {
	s := sp.data()
	if len(name) == 1 && name[0] < 128 {
		return s.short[name[0]]
	}
	return s.long[name]
}

// has reports whether any of the named options is set (and, for a
// negatable option, not turned off again after).
func (p *opts) has(names ...string) bool {
	return p.anyOn(optHit.set, names...)
}

// anyOn reports whether any of the named options is on by its last use
// in the argv, as on reads a use.
func (p *opts) anyOn(on func(optHit) bool, names ...string) bool {
	for _, n := range names {
		id := p.spec.id(n)
		if id == 0 {
			continue
		}
		last := false
		for _, h := range p.hits {
			if h.def == id {
				last = on(h)
			}
		}
		if last {
			return true
		}
	}
	return false
}

// set reports whether the use sets its option (not --no-NAME).
func (h optHit) set() bool { return !h.neg }

// value returns the last value given to any of the named options.
func (p *opts) value(names ...string) (Arg, bool) {
	var out Arg
	found := false
	for _, h := range p.hits {
		if !h.hasVal || h.def <= 0 {
			continue
		}
		for _, n := range names {
			if p.spec.id(n) == h.def {
				out, found = h.val, true
			}
		}
	}
	return out, found
}

// values returns every value given to the named options, in order.
func (p *opts) values(names ...string) []Arg {
	var out []Arg
	for _, h := range p.hits {
		if !h.hasVal || h.def <= 0 {
			continue
		}
		for _, n := range names {
			if p.spec.id(n) == h.def {
				out = append(out, h.val)
				break
			}
		}
	}
	return out
}

// describe renders the parse for --explain: each option with its
// canonical (longest) name and value, then the operands.
func (p *opts) describe() string {
	var parts []string
	for _, h := range p.hits {
		if h.def <= 0 {
			// A lenient program's option, or -NUM.
			w := h.val.Value
			if h.def < 0 {
				w = "-" + w
			}
			parts = append(parts, w)
			continue
		}
		name := ""
		if h.def > 0 {
			d := p.spec.data().defs[h.def-1]
			name = d.names[len(d.names)-1]
			if len(name) == 1 {
				name = "-" + name
			} else {
				name = "--" + name
			}
		}
		if h.neg {
			name = "--no-" + strings.TrimPrefix(name, "--")
		}
		if h.hasVal {
			name += "=" + h.val.Value
		}
		parts = append(parts, name)
	}
	if len(p.unknown) > 0 {
		parts = append(parts, "unknown option(s)")
	}
	if len(p.operands) > 0 {
		ops := make([]string, len(p.operands))
		for i, o := range p.operands {
			ops[i] = o.Value
		}
		parts = append(parts, "operands: "+strings.Join(ops, " "))
	}
	return strings.Join(parts, " ")
}
