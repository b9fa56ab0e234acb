package shell

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/protect"
)

// Default caps. Past any of them the analysis is malformed: fail closed,
// never unbounded time.
const (
	defaultMaxBytes    = 256 << 10
	defaultMaxDepth    = 16
	defaultMaxCommands = 10000
	maxSyntaxDepth     = 256
)

// errCap aborts a walk that went past a cap.
var errCap = errors.New("analysis limit exceeded")

// pooledParser is a parser with the reader it reads from, recycled
// together: a reader per parse was one more allocation per analysis.
type pooledParser struct {
	p *syntax.Parser
	r strings.Reader
}

var parsers = sync.Pool{New: func() any {
	return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash))}
}}

func parse(src string) (*syntax.File, error) {
	pp := parsers.Get().(*pooledParser)
	defer parsers.Put(pp)
	pp.r.Reset(src)
	defer pp.r.Reset("")
	return pp.p.Parse(&pp.r, "")
}

// level is one parsed text: the top-level input or a payload inside it.
type level struct {
	src   string
	base  int  // offset of src in Analysis.Input when exact
	exact bool // whether offsets map one to one
	outer Span // span to report when they don't
	// cr is the byte standing for a carriage return in src, or 0 (see
	// parserText); values are mapped back to "\r".
	cr byte
	// consts are the variables this text sets once, to a static value,
	// before using them (see constants).
	consts map[string]constVal
}

// stdinKind says where a command's standard input comes from.
type stdinKind int

const (
	stdinNone stdinKind = iota
	stdinPipe
	stdinText  // here-doc or here-string
	stdinFile  // < FILE
	stdinSubst // < <(…)
)

type stdin struct {
	kind   stdinKind
	text   string // for stdinText
	static bool
	span   Span
	file   Arg   // for stdinFile
	subst  int32 // for stdinSubst: 1 + index in substLists
}

// meta is what the walker keeps about a candidate beyond the public
// Command.
type meta struct {
	consumer string // "shell" or "interp" when it runs code read from a pipe
	output   string // static text it writes to stdout (echo, printf)
	hasOut   bool
	sends    bool // sends its stdin to another host
	// pipeUpload: a raw socket sender fed by a pipe; an upload unless
	// what flows in is static text (a request written inline).
	pipeUpload bool
	// secret is set (to what was read, and a space) when the command
	// reads a secret or warden's own files: what it prints may be sent.
	secret string
}

type walker struct {
	opts  Options
	a     *Analysis
	lvl   *level
	depth int
	nest  int
	err   error
	// listed is whether the input is long enough that an analysis
	// without candidates reports an empty list rather than none.
	listed bool
	// argBuf is the block argSlice carves argv slices from. It is part
	// of the result, so it is never recycled.
	argBuf []Arg

	// The rest is working memory that the walkers pool recycles: none of
	// it is reachable from a returned Analysis.

	// commands and findings back Analysis.Commands and Findings during
	// the walk; finish copies them out.
	commands []Command
	findings []Finding
	meta     []meta
	funcs    map[string]*funcDef
	active   map[string]bool // functions being expanded
	// expanded are function bodies already walked, per stdin kind.
	expanded map[expansion]bool
	// bombs are remembered forkBomb answers (see walker.forkBomb).
	bombs map[*syntax.FuncDecl]bool
	// substLists are the ranges of Analysis.Commands run by arguments'
	// substitutions; their names are looked up only when needed.
	substLists []cmdRange
	// free are cmd values to reuse (see exec).
	free []*cmd
	// val is resolve's buffer for building arg values.
	val argText
	// dir is the working directory as cd and pushd leave it; dirStack is
	// pushd's stack.
	dir      dirState
	dirStack []dirState
	// written are the files the line wrote, by resolved path, with what
	// was written when known (write then run).
	written map[string]writtenText
	// probes counts the extra readings tried (see maxProbes).
	probes int
	// probing is set while an unknown program's operands are read on the
	// side (see unknownWrapper): probes do not nest.
	probing bool
	// netFDs are descriptors the line opened on a network socket.
	netFDs map[string]bool
	// tainted are variables and files (by resolved path) that hold a
	// secret the line read, with what it was.
	tainted map[string]string
	// nextPos are the positional parameters ($0 first) of the next
	// payload (sh -c CODE NAME ARGS…), when all are static.
	nextPos []string
	// nextEnv are the variables the next payload inherits with values
	// known here (H=~ bash -c …, env H=~ sh -c …, export H=~; sh -c …).
	nextEnv map[string]string
	// stmtOff is the offset, in the level's text, of the simple command
	// being walked: exports made before it reach its payloads.
	stmtOff int
	// globstar is set once the line runs shopt -s globstar.
	globstar bool
	// tableCache is the protected-path table built from
	// Options.ProtectedPaths (see walker.table).
	tableCache *protect.Table
	// top is the level of the input itself (lvl points to it at the
	// start), kept in the walker to save an allocation.
	top level
	// res is the block the analysis lives in (see result).
	res *result
}

// result is an analysis with room for the commonest outcome, one or two
// candidates of a few words with up to two findings, so that it takes
// one allocation.
type result struct {
	a    Analysis
	cmd  [2]Command
	fnd  [2]Finding
	args [12]Arg
}

// walkers recycles walkers across analyses: a 64 KiB input needs a few
// hundred kilobytes of candidate lists and metadata, and allocating them
// afresh each time was a fifth of the garbage an analysis left.
var walkers = sync.Pool{New: func() any { return new(walker) }}

// maxKept bounds the candidate lists a pooled walker keeps, so one huge
// analysis (MaxCommands is the caller's) does not pin its memory.
const maxKept = 1 << 14

// Analyze analyses src. It never panics and always returns a verdict.
func (o Options) Analyze(src string) (a *Analysis) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = defaultMaxDepth
	}
	if o.MaxCommands <= 0 {
		o.MaxCommands = defaultMaxCommands
	}
	r := &result{a: Analysis{Verdict: Safe}}
	a = &r.a
	if len(src) > o.MaxBytes {
		a.Input = src
		return malformed(a, fmt.Sprintf("input is %d bytes, over the %d-byte limit", len(src), o.MaxBytes))
	}
	a.Input = src
	defer func() {
		// A parser or walker bug must never let a command through.
		if r := recover(); r != nil {
			a.Commands, a.Findings = nil, nil
			malformed(a, fmt.Sprintf("internal analysis error: %v", r))
		}
	}()
	// A walker that panics is dropped with its scratch lists, which the
	// recover above has already detached from a.
	w := walkers.Get().(*walker)
	w.start(o, a)
	w.res, w.argBuf = r, r.args[:0:len(r.args)]
	w.run()
	w.finish()
	return a
}

// start prepares a pooled walker for analysing a.Input.
func (w *walker) start(o Options, a *Analysis) {
	w.opts, w.a = o, a
	w.top = level{exact: true}
	w.lvl = &w.top
	if strings.HasPrefix(o.Cwd, "/") {
		w.dir = dirState{path: o.Cwd, known: true}
	}
	if n := min(len(a.Input)/24+4, o.MaxCommands); n > 8 {
		w.listed = true
		if cap(w.commands) < n {
			w.commands = make([]Command, 0, n)
		}
		if cap(w.meta) < n {
			w.meta = make([]meta, 0, n)
		}
	}
	a.Commands, a.Findings = w.commands[:0], w.findings[:0]
}

// run parses and walks the input and sets the verdict.
func (w *walker) run() {
	a := w.a
	text, cr, why := parserText(a.Input)
	if why != "" {
		malformed(a, why)
		return
	}
	w.lvl.src, w.lvl.cr = text, cr
	if w.dir.known && strings.HasPrefix(w.dir.path, "/") {
		// A command that runs inside warden's own default directories
		// reaches its files by their bare names (cat config.yaml),
		// which are not told from any other word. (Only the default
		// ones: a config file given in a project protects the
		// project's directory, where commands must still run.)
		// The directory cleaned lexically; no file system look-ups on
		// every analysis (a symlinked way in is left to the sandbox).
		env := w.env()
		env.FS = nil
		var rb [4]string
		for _, d := range protect.AppendResolve(rb[:0], env, w.dir.path) {
			if m := defaultTable().Match(d, protect.Read); m.Class == clsWardenSelf {
				w.findTier(-1, clsWardenSelf, TierHardline, Span{0, len(a.Input)}, "runs in "+d+", warden's own directory")
				break
			}
		}
	}
	if w.fast(text) {
		w.verdict()
		return
	}
	f, err := parse(text)
	if err != nil {
		w.windowsFallback()
		malformed(a, parseError(err))
		return
	}
	w.lvl.consts = w.textConsts(f, text)
	clean, cf, why := w.cleanReading(a.Input, f)
	if why != "" {
		malformed(a, why)
		return
	}
	w.stmts(f.Stmts, nil, stdin{})
	if cf != nil {
		// The reading a person sees, walked too: a name disguised with
		// format characters or fullwidth letters is still recognised.
		w.lvl = &level{src: clean, outer: Span{0, len(a.Input)}}
		w.lvl.consts = w.textConsts(cf, clean)
		w.dir = dirState{path: w.opts.Cwd, known: strings.HasPrefix(w.opts.Cwd, "/")}
		w.stmts(cf.Stmts, []string{asDisplayed}, stdin{})
	}
	w.verdict()
}

// verdict runs the checks across candidates and sets the verdict.
func (w *walker) verdict() {
	a := w.a
	if w.err != nil {
		malformed(a, w.err.Error())
		return
	}
	w.structural()
	a.Verdict = Safe
	for _, f := range a.Findings {
		if f.Tier == TierHardline || f.Tier == TierFloor {
			a.Verdict = Hardline
			break
		}
		a.Verdict = Dangerous
	}
}

// finish gives the analysis its own copies of the candidate and finding
// lists, wipes the walker's working memory and returns it to the pool.
func (w *walker) finish() {
	a := w.a
	cs, fs := a.Commands, a.Findings // the scratch lists, maybe regrown
	a.Commands, a.Findings = nil, nil
	if w.err == nil {
		if w.res != nil && len(cs) > 0 && len(cs) <= len(w.res.cmd) {
			a.Commands = w.res.cmd[:len(cs):len(cs)]
			copy(a.Commands, cs)
		} else if len(cs) > 0 || w.listed {
			a.Commands = make([]Command, len(cs))
			copy(a.Commands, cs)
		}
		if w.res != nil && len(fs) > 0 && len(fs) <= len(w.res.fnd) {
			a.Findings = w.res.fnd[:len(fs):len(fs)]
			copy(a.Findings, fs)
		} else if len(fs) > 0 {
			a.Findings = make([]Finding, len(fs))
			copy(a.Findings, fs)
		}
	}
	// Cleared so the pool pins nothing of this analysis and the next one
	// starts from zero values.
	clear(cs)
	clear(fs)
	clear(w.meta)
	clear(w.funcs)
	clear(w.active)
	clear(w.expanded)
	clear(w.bombs)
	if cap(cs) > maxKept || cap(w.meta) > maxKept {
		cs, w.meta = nil, nil
	}
	if cap(fs) > maxKept {
		fs = nil
	}
	clear(w.written)
	*w = walker{
		written:    w.written,
		commands:   cs[:0],
		findings:   fs[:0],
		meta:       w.meta[:0],
		funcs:      w.funcs,
		active:     w.active,
		expanded:   w.expanded,
		bombs:      w.bombs,
		substLists: w.substLists[:0],
		free:       w.free,
		val:        argText{buf: w.val.buf[:0]},
	}
	walkers.Put(w)
}

func malformed(a *Analysis, msg string) *Analysis {
	a.Verdict = Malformed
	a.Error = msg
	return a
}

// parseError renders a parse error with its line:column.
func parseError(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("parse error at %d:%d: %s", pe.Pos.Line(), pe.Pos.Col(), pe.Text)
	}
	return "parse error: " + err.Error()
}

func (w *walker) span(p, e syntax.Pos) Span {
	if !w.lvl.exact || !p.IsValid() || !e.IsValid() {
		return w.lvl.outer
	}
	return Span{Start: w.lvl.base + int(p.Offset()), End: w.lvl.base + int(e.Offset())}
}

func (w *walker) text(p, e syntax.Pos) string {
	s, en := int(p.Offset()), int(e.Offset())
	if s < 0 || en > len(w.lvl.src) || s > en {
		return ""
	}
	return uncr(w.lvl.src[s:en], w.lvl.cr)
}

func (w *walker) find(cmd int, class string, sp Span) { w.findDetail(cmd, class, sp, "") }

// findDetail records a finding with what decided it.
func (w *walker) findDetail(cmd int, class string, sp Span, detail string) {
	w.findTier(cmd, class, "", sp, detail)
}

// findTier records a finding whose tier comes from the protected-path
// table ("" for the catalogue's).
func (w *walker) findTier(cmd int, class string, tier Tier, sp Span, detail string) {
	// Duplicates come from one rule firing twice on one command, so they
	// sit at the end: a short backward scan finds them without a map.
	fs := w.a.Findings
	for i := len(fs) - 1; i >= 0 && i >= len(fs)-16; i-- {
		if fs[i].Class == class && fs[i].Command == cmd && fs[i].Span == sp {
			return
		}
	}
	c, ok := fullCatalog()[class]
	if !ok {
		panic("shell: finding of unknown class " + class)
	}
	if tier == "" {
		tier = c.Tier
	}
	if cmd >= 0 && cmd < len(w.meta) && (isSecretRead(class) || class == clsWardenSelf) && w.meta[cmd].secret == "" {
		w.meta[cmd].secret = detail + " "
	}
	w.a.Findings = append(w.a.Findings, Finding{Class: class, Tier: tier, Description: c.Description, Command: cmd, Span: sp, Opaque: c.Opaque, Detail: detail})
}

func (w *walker) stmts(list []*syntax.Stmt, via []string, in stdin) {
	for _, st := range list {
		w.stmt(st, via, in)
	}
}

func (w *walker) stmt(st *syntax.Stmt, via []string, in stdin) {
	if w.err != nil || st == nil {
		return
	}
	w.nest++
	defer func() { w.nest-- }()
	if w.nest > maxSyntaxDepth {
		w.err = fmt.Errorf("%w: nesting deeper than %d", errCap, maxSyntaxDepth)
		return
	}
	in, redirs := w.redirects(st.Redirs, via, in)
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, st, via, in, redirs)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.pipeline(c, via, in)
		} else {
			w.stmt(c.X, via, in)
			w.stmt(c.Y, via, in)
		}
	case *syntax.FuncDecl:
		if w.funcs == nil {
			w.funcs = map[string]*funcDef{}
		}
		w.funcs[uncr(c.Name.Value, w.lvl.cr)] = &funcDef{decl: c, lvl: w.lvl}
	case *syntax.Block:
		// A group's (or subshell's) stdin is its commands' stdin: a
		// shell inside `… | { sh; }` reads the pipe.
		w.stmts(c.Stmts, via, in)
	case *syntax.Subshell:
		w.stmts(c.Stmts, via, in)
	case *syntax.ForClause:
		if loopBomb(c) {
			w.find(-1, clsForkBomb, w.span(c.Pos(), c.End()))
		}
		if it, ok := c.Loop.(*syntax.WordIter); ok {
			// The loop's values are what its words expand to, one at a
			// time: a word naming warden's files (for f in
			// ~/.config/w*) hands them to the body as an assignment
			// would.
			for _, word := range it.Items {
				for _, a := range w.word(word) {
					w.assignedPath(-1, a)
				}
			}
		}
		if !w.forEach(c, via) {
			w.compound(c, via)
		}
	case nil:
	default:
		if loopBomb(c) {
			w.find(-1, clsForkBomb, w.span(c.Pos(), c.End()))
		}
		w.compound(c, via)
	}
	w.redirectFindings(-1, redirs)
}

// maxLoopValues bounds the values forEach walks a loop's body for.
const maxLoopValues = 8

// forEach walks `for x in A B C; do …; done` once per value when the
// values are few and static and the body never sets x: x is then each
// value in turn, as constant as any (for d in ~ /etc; do rm -rf $d;
// done deletes the home). It reports whether it walked the loop.
func (w *walker) forEach(f *syntax.ForClause, via []string) bool {
	it, ok := f.Loop.(*syntax.WordIter)
	if !ok || f.Select || len(it.Items) == 0 || len(it.Items) > maxLoopValues {
		return false
	}
	name := it.Name.Value
	var vals []string
	for _, item := range it.Items {
		v, ok := assignedWord(item)
		if !ok {
			return false
		}
		vals = append(vals, uncr(v, w.lvl.cr))
	}
	if w.mayAssign(f.Do, name) || len(vals) > 1 && w.nest > 8 {
		return false
	}
	consts := make(map[string]constVal, len(w.lvl.consts)+1)
	for k, v := range w.lvl.consts {
		consts[k] = v
	}
	prev := w.lvl.consts
	w.lvl.consts = consts
	for _, v := range vals {
		consts[name] = constVal{value: v, after: int(f.Pos().Offset())}
		w.stmts(f.Do, via, stdin{})
	}
	w.lvl.consts = prev
	return true
}

// mayAssign reports whether stmts could set the variable name: by an
// assignment, a declaration, read or unset, a function call, a sourced
// file or eval (which can set it where this walk cannot see), a loop or
// arithmetic (kept simple: any of these may).
func (w *walker) mayAssign(stmts []*syntax.Stmt, name string) bool {
	sets := false
	for _, st := range stmts {
		walkTree(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				sets = sets || n.Name != nil && n.Name.Value == name
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					cmd := n.Args[0].Lit()
					sets = sets || cmd == "" || cmd == "source" || cmd == "." || cmd == "eval" || w.funcs[cmd] != nil
				}
				for _, a := range n.Args {
					lit := a.Lit()
					sets = sets || lit == name || strings.HasPrefix(lit, name+"=") || strings.HasPrefix(lit, name+"[")
				}
			case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.WordIter, *syntax.FuncDecl:
				sets = true
			}
			return !sets
		})
		if sets {
			return true
		}
	}
	return false
}

// compound walks every statement and substitution inside a compound
// command (if, while, for, case, blocks, subshells, tests, arithmetic,
// declarations) by letting walkTree find them.
func (w *walker) compound(node syntax.Node, via []string) {
	switch n := node.(type) {
	case *syntax.DeclClause:
		w.decl(n, via)
		return
	case *syntax.TestClause, *syntax.LetClause, *syntax.ArithmCmd:
		w.arithQuoted(n, via)
	}
	first := true
	walkTree(node, func(n syntax.Node) bool {
		if first {
			first = false
			return true
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			w.stmt(n, via, stdin{})
			return false
		case *syntax.CmdSubst, *syntax.ProcSubst:
			w.substs(n, via)
			return false
		case *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.TestClause, *syntax.LetClause:
			w.arithQuoted(n, via)
		case *syntax.ParamExp:
			if promptOp(n) {
				w.promptExpansion(n, via)
			}
		}
		return w.err == nil
	})
}

// arithQuoted: a quoted string inside arithmetic or a [[ -v ]] test is
// evaluated as a name with a subscript, and a command substitution in
// the subscript runs ($(( 'a[$(cmd)]' )), [[ -v 'a[$(cmd)]' ]]).
func (w *walker) arithQuoted(n syntax.Node, via []string) {
	walkTree(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.SglQuoted:
			w.arithSubscripts(m.Value, via)
		case *syntax.DblQuoted:
			if v, ok := staticWord(&syntax.Word{Parts: []syntax.WordPart{m}}); ok {
				w.arithSubscripts(v, via)
			}
		}
		return true
	})
}

// promptExpansion: ${x@P} expands x's value as a prompt, which runs the
// command substitutions in it. A constant's value is read; another is
// opaque.
func (w *walker) promptExpansion(p *syntax.ParamExp, via []string) {
	q := *p
	q.Exp = nil
	if v, ok := w.constant(&q); ok {
		w.nested(": \""+strings.ReplaceAll(v, `"`, `\"`)+"\"", appendVia(via, "${…@P}"), w.span(p.Pos(), p.End()), -1, stdin{}, false)
		return
	}
	w.a.Dynamic = true
	w.findDetail(-1, clsDynamic, w.span(p.Pos(), p.End()), "${"+p.Param.Value+"@P} runs the command substitutions in a value warden cannot see")
}

// substs walks the command and process substitutions inside a node and
// returns the range [lo, hi) of Analysis.Commands they ran.
func (w *walker) substs(node syntax.Node, via []string) (lo, hi int) {
	lo = len(w.a.Commands)
	if word, ok := node.(*syntax.Word); ok && (word == nil || !mayRun(word.Parts)) {
		return lo, lo
	}
	if node == nil {
		return lo, lo
	}
	walkTree(node, func(n syntax.Node) bool {
		var list []*syntax.Stmt
		var how string
		switch n := n.(type) {
		case *syntax.CmdSubst:
			list, how = n.Stmts, "$(…)"
		case *syntax.ProcSubst:
			list, how = n.Stmts, n.Op.String()+"(…)"
		case *syntax.ArithmExp:
			w.arithQuoted(n, via)
			return w.err == nil
		case *syntax.ParamExp:
			if promptOp(n) {
				w.promptExpansion(n, via)
			}
			return w.err == nil
		default:
			return w.err == nil
		}
		w.depth++
		if w.depth > w.opts.MaxDepth {
			w.err = fmt.Errorf("%w: substitutions nested deeper than %d", errCap, w.opts.MaxDepth)
			return false
		}
		w.stmts(list, appendVia(via, how), stdin{})
		w.depth--
		return false
	})
	// Only substitutions append candidates during the walk, so what they
	// ran is exactly the candidates added since it began.
	return lo, len(w.a.Commands)
}

func appendVia(via []string, how string) []string {
	out := make([]string, len(via), len(via)+1)
	copy(out, via)
	return append(out, how)
}

// redirects resolves a statement's redirections and works out its stdin.
func (w *walker) redirects(rs []*syntax.Redirect, via []string, in stdin) (stdin, []Redirect) {
	var out []Redirect
	for _, r := range rs {
		var lo, hi int
		if r.Word != nil {
			lo, hi = w.substs(r.Word, via)
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				w.substs(r.Hdoc, via)
				in = stdin{kind: stdinText, text: w.hdocText(r.Hdoc), static: !hasDynamicParts(r.Hdoc), span: w.span(r.Hdoc.Pos(), r.Hdoc.End())}
			} else {
				in = stdin{kind: stdinText, static: true}
			}
			continue
		case syntax.WordHdoc:
			args := w.word(r.Word)
			if len(args) > 0 {
				in = stdin{kind: stdinText, text: args[0].Value + "\n", static: args[0].Static, span: args[0].Span}
			}
			continue
		}
		args := w.word(r.Word)
		if len(args) == 0 {
			continue
		}
		t := args[0]
		if hi > lo {
			t.subst = w.substRange(r.Word, lo, hi)
		}
		if r.Op == syntax.RdrIn {
			if _, isProc := firstPart(r.Word).(*syntax.ProcSubst); isProc {
				in = stdin{kind: stdinSubst, subst: t.subst, span: t.Span}
			} else {
				in = stdin{kind: stdinFile, file: t, span: t.Span}
			}
		}
		rd := Redirect{Op: r.Op.String(), Target: t}
		if r.N != nil {
			rd.fd = r.N.Value
		}
		out = append(out, rd)
	}
	return in, out
}

// firstPart is a word's only part, or nil.
func firstPart(word *syntax.Word) syntax.WordPart {
	if word == nil || len(word.Parts) != 1 {
		return nil
	}
	return word.Parts[0]
}

// hdocText returns a here-document body with escapes of an unquoted
// delimiter resolved and dynamic parts as their source text.
func (w *walker) hdocText(word *syntax.Word) string {
	var b strings.Builder
	for _, p := range word.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			b.WriteString(lit.Value)
			continue
		}
		b.WriteString(w.shape(p))
	}
	return uncr(b.String(), w.lvl.cr)
}

// decl handles export/declare/local/readonly/typeset.
func (w *walker) decl(d *syntax.DeclClause, via []string) {
	idx := -1
	for _, as := range d.Args {
		if as.Index != nil {
			w.substs(as.Index, via)
		}
		if as.Value != nil {
			if lo, hi := w.substs(as.Value, via); hi > lo && as.Name != nil {
				w.taintAssign(as.Name.Value, lo, hi)
			}
		}
		if as.Array != nil {
			w.substs(as.Array, via)
		}
		if as.Name == nil {
			if as.Value != nil {
				// declare 'a[$(cmd)]=1': a name with a subscript.
				if v, ok := staticWord(as.Value); ok {
					w.arithSubscripts(v, via)
				}
			}
			continue
		}
		val := ""
		if as.Value != nil {
			if args := w.word(as.Value); len(args) > 0 {
				val = args[0].Value
				if args[0].Static {
					w.arithSubscripts(val, via)
				}
				w.assignedPath(idx, args[0])
			}
		}
		w.assignFindings(idx, as.Name.Value, val, w.span(as.Pos(), as.End()), via)
	}
}

// call handles a simple command.
func (w *walker) call(ce *syntax.CallExpr, st *syntax.Stmt, via []string, in stdin, redirs []Redirect) {
	w.stmtOff = int(ce.Pos().Offset())
	var assigns []string
	for _, as := range ce.Assigns {
		if as.Index != nil {
			w.substs(as.Index, via) // a[$(cmd)]=v runs cmd
		}
		val := ""
		if as.Value != nil {
			if lo, hi := w.substs(as.Value, via); hi > lo && as.Name != nil {
				w.taintAssign(as.Name.Value, lo, hi)
			}
			if args := w.word(as.Value); len(args) > 0 {
				val = args[0].Value
				if args[0].Static {
					w.arithSubscripts(val, via)
				}
				w.assignedPath(-1, args[0])
			}
		}
		if as.Array != nil {
			w.substs(as.Array, via)
		}
		if as.Name != nil {
			assigns = append(assigns, as.Name.Value+"="+val)
		}
	}
	if len(ce.Args) == 0 {
		for i, as := range ce.Assigns {
			if as.Name != nil {
				name, val, _ := strings.Cut(assigns[i], "=")
				w.assignFindings(-1, name, val, w.span(as.Pos(), as.End()), via)
			}
		}
		w.redirectFindings(-1, redirs)
		return
	}
	args := w.argSlice(len(ce.Args))
	for _, word := range ce.Args {
		lo, hi := w.substs(word, via)
		n := len(args)
		args = w.wordInto(args, word)
		if hi > lo {
			ix := w.substRange(word, lo, hi)
			for i := n; i < len(args); i++ {
				args[i].subst = ix
			}
		}
	}
	sp := w.span(ce.Pos(), ce.End())
	idx := w.exec(args, via, assigns, in, sp)
	if idx >= 0 {
		w.a.Commands[idx].Redirs = redirs
		w.redirectFindings(idx, redirs)
		w.sentSubsts(idx)
	}
}

// sentSubsts: a sender given a secret inside a substituted argument
// (curl -d "$(cat ~/.ssh/id_rsa)") exfiltrates it.
func (w *walker) sentSubsts(idx int) {
	c := &w.a.Commands[idx]
	if !senders[c.key()] {
		return
	}
	for _, a := range c.Argv[1:] {
		if a.subst > 0 {
			r := w.substLists[a.subst-1]
			w.exfil(int(r.lo), int(r.hi), idx)
		}
		if what, ok := w.taintedVars(a); ok {
			w.findDetail(idx, clsExfilSecret, a.Span, what)
		}
	}
}

// redirectFindings judges a command's redirections: targets written (or
// read) through the protected-path table, /dev/tcp sockets, and what a
// command writes to a file it may run later.
func (w *walker) redirectFindings(idx int, redirs []Redirect) {
	for _, r := range redirs {
		t := r.Target
		socket := strings.HasPrefix(t.Value, "/dev/tcp/") || strings.HasPrefix(t.Value, "/dev/udp/")
		if (r.Op == ">&" || r.Op == "<>&") && w.netFDs[t.Value] {
			socket = true // a descriptor opened on a socket earlier (exec 3<>/dev/tcp/…)
		}
		if socket {
			if strings.HasPrefix(t.Value, "/dev/") {
				w.find(idx, clsReverseShell, t.Span)
				if hasMetadataHost(t.Value) {
					w.find(idx, clsMetadata, t.Span)
				}
				if r.fd != "" && r.Op != "<" {
					if w.netFDs == nil {
						w.netFDs = map[string]bool{}
					}
					w.netFDs[r.fd] = true
				}
			}
			if idx >= 0 && r.Op != "<" && w.meta[idx].secret != "" {
				// What the command prints goes to the socket.
				w.findDetail(idx, clsExfilSecret, t.Span, strings.TrimSuffix(w.meta[idx].secret, " "))
			}
			continue
		}
		var acc access
		switch r.Op {
		case ">", ">>", ">|", "&>", "&>>":
			acc = accWrite
		case "<>":
			acc = accWrite | accRead
		case "<":
			acc = accRead
		case ">&", "<&":
			if strings.Trim(t.Value, "0123456789-") == "" {
				continue
			}
			acc = accWrite
		default:
			continue
		}
		cls, tier, d := w.argClass(t, acc)
		if acc&accWrite == 0 && cls != clsWardenSelf && !isSecretRead(cls) {
			cls = ""
		}
		if cls != "" {
			w.findTier(idx, cls, tier, t.Span, d)
		}
		if acc&accWrite != 0 && idx >= 0 {
			m := w.meta[idx]
			w.wrote(t, m.output, m.hasOut)
			if m.secret != "" && t.Static {
				w.taint(w.pathKey(t.Value), strings.TrimSuffix(m.secret, " "))
			}
		}
	}
}

// pipeline walks a | b | c and judges what flows into shells.
func (w *walker) pipeline(b *syntax.BinaryCmd, via []string, in stdin) {
	// Most pipelines are short: their stages and candidate starts fit in
	// arrays on the stack.
	var stageBuf [8]*syntax.Stmt
	var startBuf [9]int
	stages := flattenPipe(flattenPipe(stageBuf[:0], b.X), b.Y)
	starts := startBuf[:0]
	for i, s := range stages {
		starts = append(starts, len(w.a.Commands))
		sin := stdin{kind: stdinPipe}
		if i == 0 {
			sin = in
		}
		w.stmt(s, via, sin)
	}
	starts = append(starts, len(w.a.Commands))
	for i := 1; i < len(stages); i++ {
		for c := starts[i]; c < starts[i+1]; c++ {
			if senders[w.a.Commands[c].key()] || w.meta[c].sends {
				w.exfil(starts[0], starts[i], c)
			}
			if w.meta[c].pipeUpload && !(starts[i]-starts[i-1] == 1 && w.meta[starts[i-1]].hasOut) {
				w.findDetail(c, clsUpload, w.a.Commands[c].Span, "what the pipe sends")
			}
			if w.meta[c].consumer == "" {
				continue
			}
			w.judgeFeed(c, starts[:i+1], via)
		}
	}
	w.xargsBomb(stages, starts)
}

// flattenPipe appends the stages of a | b | c to dst, left to right.
func flattenPipe(dst []*syntax.Stmt, s *syntax.Stmt) []*syntax.Stmt {
	if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated {
		return flattenPipe(flattenPipe(dst, bc.X), bc.Y)
	}
	return append(dst, s)
}

// judgeFeed classifies code piped into candidate c from the stages before
// it (their candidates start at starts[0..len-2]).
func (w *walker) judgeFeed(c int, starts []int, via []string) {
	cmd := &w.a.Commands[c]
	prevStart, prevEnd := starts[len(starts)-2], starts[len(starts)-1]
	switch w.meta[c].consumer {
	case "sql", "xargs":
		// A database client runs the statements it reads; xargs adds
		// what it reads to its command. Only text known here is read.
		if text, ok := w.pipeText(starts, len(starts)-2); ok {
			k := w.feedCmd(c)
			if w.meta[c].consumer == "sql" {
				k.sql(text, w.a.Commands[starts[0]].Span.join(cmd.Span))
			} else {
				k.xargsInput(text)
			}
			w.freeCmd(k)
			return
		}
		if w.meta[c].consumer == "xargs" {
			w.xargsFromFind(c, prevStart, prevEnd)
		}
		return
	}
	for p := starts[0]; p < prevEnd; p++ {
		if fetchers[w.a.Commands[p].key()] {
			if k := cmd.key(); k == "iex" || k == "invoke-expression" {
				w.find(-1, clsWinRemote, w.a.Commands[p].Span.join(cmd.Span))
				return
			}
			w.find(-1, clsRemotePipe, w.a.Commands[p].Span.join(cmd.Span))
			return
		}
	}
	// Static text, maybe through decoders computed here: read what it
	// says.
	if text, ok := w.pipeText(starts, len(starts)-2); ok {
		sp := w.a.Commands[starts[0]].Span.join(w.a.Commands[prevStart].Span)
		if w.meta[c].consumer == "shell" {
			w.nested(text, appendVia(cmd.Via, cmd.Name()+" <pipe"), sp, -1, stdin{}, true)
			return
		}
		w.code(c, cmd.key(), Arg{Value: text, Static: true, Span: sp}, appendVia(cmd.Via, cmd.Name()+" <pipe"))
		return
	}
	for p := starts[0]; p < prevEnd; p++ {
		if isDecoder(&w.a.Commands[p]) {
			w.find(-1, clsDecodeExec, w.a.Commands[p].Span.join(cmd.Span))
			return
		}
	}
	w.find(-1, clsStdinShell, cmd.Span)
}

// xargsFromFind judges `find STARTS … | xargs CMD`: CMD gets the names
// find lists, so a CMD that opens its operands reads the trees of the
// starts, as find -exec CMD does.
func (w *walker) xargsFromFind(c, from, to int) {
	reader := false
	for i := c + 1; i < len(w.a.Commands); i++ {
		if in := &w.a.Commands[i]; len(in.Via) > 0 && strings.HasPrefix(in.Via[len(in.Via)-1], "xargs") {
			reader = !metadataOnly[in.key()]
			break
		}
	}
	if !reader {
		return
	}
	for p := from; p < to; p++ {
		if w.a.Commands[p].key() != "find" {
			continue
		}
		k := w.feedCmd(p)
		starts, _, _ := findStarts(k.args)
		if starts == nil {
			starts = []Arg{{Value: ".", Static: true, Span: k.span}}
		}
		k.tree(starts, accRead)
		w.freeCmd(k)
	}
}

// feedCmd makes a rule context for candidate i, to judge its input
// after the walk reached it (freed with freeCmd).
func (w *walker) feedCmd(i int) *cmd {
	c := &w.a.Commands[i]
	k := w.newCmd()
	*k = cmd{w: w, idx: i, name: c.key(), args: c.Argv, via: c.Via, span: c.Span}
	return k
}

// join returns the smallest span covering both.
func (s Span) join(o Span) Span {
	if o.Start < s.Start {
		s.Start = o.Start
	}
	if o.End > s.End {
		s.End = o.End
	}
	return s
}

// payload parses code run by a carrier (sh -c, eval, su -c, a piped
// echo…). off is the offset in Input where code starts verbatim, or -1.
// Code that does not parse is malformed.
func (w *walker) payload(code string, via []string, sp Span, off int, in stdin) {
	w.nested(code, via, sp, off, in, true)
}

// dynamicPayload parses the static shape of a payload that is only partly
// known. Parse failures are expected (the real text is unknown) and are
// not malformed: the payload is already a dynamic-execution finding.
func (w *walker) dynamicPayload(code string, via []string, sp Span, in stdin) {
	w.nested(code, via, sp, -1, in, false)
}

func (w *walker) nested(code string, via []string, sp Span, off int, in stdin, known bool) {
	if w.err != nil {
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > w.opts.MaxDepth {
		w.err = fmt.Errorf("%w: payloads nested deeper than %d", errCap, w.opts.MaxDepth)
		return
	}
	what := strings.Join(via[len(via)-1:], "")
	text, cr, why := parserText(code)
	if why != "" {
		if known {
			w.err = fmt.Errorf("payload of %s: %s", what, why)
		}
		return
	}
	f, err := parse(text)
	if err != nil {
		if known {
			w.err = fmt.Errorf("payload of %s does not parse: %s", what, parseError(err))
		}
		return
	}
	clean, cf, why := w.cleanReading(code, f)
	if why != "" {
		if known {
			w.err = fmt.Errorf("payload of %s: %s", what, why)
		}
		return
	}
	pos := w.nextPos
	w.nextPos = nil
	saved := w.lvl
	w.lvl = &level{src: text, cr: cr, base: off, exact: known && off >= 0 && saved.exact, outer: sp}
	w.lvl.consts = w.textConsts(f, text)
	if pos != nil && !setsPositional(f) {
		w.lvl.consts = withPositional(w.lvl.consts, pos[0], pos[1:])
	}
	if env := w.nextEnv; len(env) > 0 {
		w.nextEnv = nil
		w.lvl.consts = w.inherit(w.lvl.consts, f, env)
	}
	w.stmts(f.Stmts, via, in)
	if cf != nil {
		w.lvl = &level{src: clean, outer: sp}
		w.lvl.consts = w.textConsts(cf, clean)
		w.stmts(cf.Stmts, appendVia(via, asDisplayed), in)
	}
	w.lvl = saved
}

// inherit adds to a payload's constants the variables it inherits from
// its environment with values known outside, unless its text could set
// them itself.
func (w *walker) inherit(consts map[string]constVal, f *syntax.File, env map[string]string) map[string]constVal {
	for name, val := range env {
		if _, ok := consts[name]; ok || w.mayAssign(f.Stmts, name) {
			continue
		}
		if consts == nil {
			consts = map[string]constVal{}
		}
		consts[name] = constVal{value: val, export: true} // inherited: exported
	}
	return consts
}

// resetsEnv are launchers that can drop or reset the environment they
// were given (env -i, env -u NAME, sudo's env_reset, su, doas, …).
var resetsEnv = map[string]bool{"env": true, "sudo": true, "su": true, "doas": true, "runuser": true, "pkexec": true,
	"setpriv": true, "systemd-run": true, "run0": true, "chroot": true, "ssh": true, "machinectl": true}

// childEnv is the environment a payload run by command idx inherits,
// as far as it is known: the line's exported constants visible at the
// command, and the command's own assignments (H=~ sh -c, env H=~ sh -c)
// whose values hold no expansion.
func (w *walker) childEnv(idx int) map[string]string {
	var env map[string]string
	for _, v := range w.a.Commands[idx].Via {
		if resetsEnv[v] {
			// env -i/-u, sudo's env_reset, su -: what was exported may
			// not arrive; only the command's own assignments are known.
			goto own
		}
	}
	for name, cv := range w.lvl.consts {
		if !cv.export || cv.array || !cv.visible(w.stmtOff) || cv.until != 0 && w.stmtOff >= cv.until || cv.exportAt > w.stmtOff {
			continue
		}
		if env == nil {
			env = map[string]string{}
		}
		env[name] = cv.value
	}
own:
	for _, as := range w.a.Commands[idx].Assigns {
		name, val, _ := strings.Cut(as, "=")
		if strings.ContainsAny(val, "$`") || !validName(name) {
			continue
		}
		if env == nil {
			env = map[string]string{}
		}
		env[name] = val
	}
	return env
}

// textConsts are the constants of a parsed text, with the positional
// parameters a top-level `set -- …` gives it.
func (w *walker) textConsts(f *syntax.File, src string) map[string]constVal {
	consts := w.constants(f)
	if strings.Contains(src, "set") && strings.Contains(src, "--") {
		consts = topPositional(f, consts)
	}
	if len(consts) > 0 {
		fence(consts, barriers(f))
	}
	return consts
}

// asDisplayed marks candidates of the cleaned reading in Command.Via.
const asDisplayed = "as displayed"

// cleanReading parses the reading of raw that a person sees, when it
// differs from raw. It returns that tree when it has the same structure
// as f (the raw parse), and a reason when it does not: the line then
// means one thing to its reader and another to bash.
func (w *walker) cleanReading(raw string, f *syntax.File) (string, *syntax.File, string) {
	clean := cleaned(raw)
	if clean == raw {
		return raw, nil, ""
	}
	cf, err := parse(clean)
	if err != nil || !sameStructure(f, cf) {
		return "", nil, "the command reads differently from how bash runs it: " + divergence(raw) +
			" changes its structure as displayed (bash treats it as an ordinary character of a word)"
	}
	return clean, cf, ""
}

// cmdRange is a range [lo, hi) of Analysis.Commands: what a
// substitution ran. For a process substitution whose output can be
// computed (<(echo …)), text is that output.
type cmdRange struct {
	lo, hi int32
	text   string
	folded bool
}

// substRange records what a word's substitutions ran, and the output of
// a process substitution when it can be computed.
func (w *walker) substRange(word *syntax.Word, lo, hi int) int32 {
	r := cmdRange{lo: int32(lo), hi: int32(hi)}
	if ps, ok := firstPart(word).(*syntax.ProcSubst); ok && ps.Op == syntax.CmdIn {
		r.text, r.folded = w.foldStmts(ps.Stmts)
	}
	w.substLists = append(w.substLists, r)
	return int32(len(w.substLists))
}

// procText is the output of the process substitution an arg is, when it
// can be computed (bash <(echo …), source <(printf …)).
func (w *walker) procText(subst int32) (string, bool) {
	if subst <= 0 || int(subst) > len(w.substLists) {
		return "", false
	}
	r := w.substLists[subst-1]
	return r.text, r.folded
}

// expansion is one walk of a function body.
type expansion struct {
	fd *funcDef
	in stdinKind
	// args are the call's arguments when the body reads them.
	args string
}

// argSlice returns an empty slice with room for n args, carved from a
// shared block: one allocation serves many commands. Its capacity is
// exactly n, so a word that expands to more (braces, $IFS) reallocates
// rather than overwriting a neighbour.
func (w *walker) argSlice(n int) []Arg {
	if cap(w.argBuf)-len(w.argBuf) < n {
		// Blocks scale with the input: a one-line command gets a small one.
		w.argBuf = make([]Arg, 0, max(n, min(512, len(w.a.Input)/4+4)))
	}
	start := len(w.argBuf)
	w.argBuf = w.argBuf[:start+n]
	return w.argBuf[start : start : start+n]
}
