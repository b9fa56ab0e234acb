package shell

import (
	"fmt"
	"strings"
)

// cmd is one candidate being classified.
type cmd struct {
	w    *walker
	idx  int
	name string
	args []Arg
	via  []string
	in   stdin
	span Span
}

// stdinSenders send their standard input to another host.
var stdinSenders = map[string]bool{"nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "openssl": true,
	"ssh": true, "mail": true, "mailx": true, "mutt": true, "sendmail": true, "ftp": true, "tftp": true}

// nameArgs are builtins whose arguments may be variable names with a
// subscript that bash evaluates as arithmetic.
var nameArgs = map[string]bool{"read": true, "printf": true, "test": true, "[": true, "let": true, "declare": true, "typeset": true,
	"local": true, "readonly": true, "export": true, "unset": true, "mapfile": true, "readarray": true, "wait": true, "getopts": true}

// maxProbes bounds the extra readings the analysis may try for one line
// (a launcher option it does not know, a command name it cannot see):
// each is a walk of the rest of the argv, and they nest.
const maxProbes = 64

// exec records a candidate and classifies it; launchers and carriers
// recurse into what they run. It returns the candidate's index.
// maxNesting caps how deep launchers, shells and payloads nest (sudo env
// timeout bash -c '…' is four).
const maxNesting = 64

func (w *walker) exec(args []Arg, via []string, assigns []string, in stdin, sp Span) int {
	if len(args) == 0 || w.err != nil {
		return -1
	}
	if len(w.a.Commands) >= w.opts.MaxCommands {
		w.err = fmt.Errorf("%w: more than %d commands", errCap, w.opts.MaxCommands)
		return -1
	}
	// Each level copies its chain of launchers: a rule that ran its own
	// command again would cost quadratic time up to MaxCommands.
	if len(via) > maxNesting {
		w.err = fmt.Errorf("%w: commands nested more than %d deep", errCap, maxNesting)
		return -1
	}
	idx := len(w.a.Commands)
	w.a.Commands = append(w.a.Commands, Command{Argv: args, Via: via, Assigns: assigns, Span: sp})
	w.meta = append(w.meta, meta{})
	for _, as := range assigns {
		name, val, _ := strings.Cut(as, "=")
		w.assignFindings(idx, name, val, sp, via)
	}
	// cmd values are recycled: rules never keep one past this call, and
	// a heap allocation per candidate was a fifth of the walk's garbage.
	c := w.newCmd()
	defer w.freeCmd(c)
	*c = cmd{w: w, idx: idx, args: args, via: via, in: in, span: sp}
	if !args[0].Static {
		w.a.Dynamic = true
		w.find(idx, clsDynamic, args[0].Span)
		w.remoteSubst(idx, args[0])
		c.unknownName()
		return idx
	}
	c.name = cmdName(args[0].Value)
	if c.name == "" {
		return idx
	}
	if fd, ok := w.funcs[c.name]; ok {
		w.callFunc(c, fd)
		return idx
	}
	c.argPaths()
	c.readsTainted()
	if nameArgs[c.name] {
		// These builtins evaluate a variable name they are given, and a
		// subscript in it as arithmetic: read 'a[$(cmd)]' runs cmd.
		for i, a := range args[1:] {
			if a.Static && (c.name != "printf" && c.name != "test" && c.name != "[" || args[i].Value == "-v") {
				w.arithSubscripts(a.Value, via)
			}
		}
	}
	if strings.Contains(args[0].Value, "/") {
		w.ranFile(idx, args[0], "")
	}
	if p, ok := programs[c.name]; ok {
		p.rule(c)
	} else if strings.HasPrefix(c.name, "mkfs.") || strings.HasPrefix(c.name, "newfs") {
		ruleMkfs(c)
	} else {
		c.unknownWrapper()
	}
	c.markEnvDump()
	if stdinSenders[c.name] && c.in.kind == stdinFile && (c.name != "openssl" || hasWord(c.args, "s_client")) {
		// What it reads on stdin goes to the other end (ssh host < f,
		// nc host port < f, mail x < f).
		c.uploadFiles([]Arg{c.in.file})
	}
	if c.in.kind == stdinText && c.in.static && !w.meta[idx].hasOut {
		// A decoder reading a static here-string prints what can be
		// computed (base64 -d <<< … | sh).
		if out, ok := transform(c.name, c.w.a.Commands[idx].Words(), c.in.text); ok && allStatic(args) && len(out) <= maxFolded {
			w.meta[idx].output, w.meta[idx].hasOut = out, true
		}
	}
	if w.opts.Profile == ProfileStrict && !knownSafe[c.name] {
		c.find(clsUnknownProgram, sp)
	}
	return idx
}

// cmdName folds a command word to its lookup key: basename, lower case
// (case-insensitive file systems run RM as rm), without .exe, python3.12
// as python.
func cmdName(word string) string {
	n := baseName(word)
	for i := 0; i < len(n); i++ {
		if c := n[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			n = strings.ToLower(n)
			break
		}
	}
	n = strings.TrimSuffix(n, ".exe")
	if n == "" || (n[len(n)-1] < '0' || n[len(n)-1] > '9') && !strings.Contains(n, ".") {
		return n // not a versioned name (python3.12, pip3)
	}
	for _, fam := range versioned {
		if strings.HasPrefix(n, fam) && strings.Trim(n[len(fam):], "0123456789.-") == "" && n != fam {
			return fam
		}
	}
	return n
}

// versioned are programs installed under versioned names (python3.12,
// pip3, ruby3.2, php8.1, perl5.36, node18, lua5.4).
var versioned = []string{"python", "pip", "ruby", "php", "perl", "node", "lua", "pypy", "tclsh", "wish", "gawk"}

func (c *cmd) find(class string, sp Span) { c.w.find(c.idx, class, sp) }

// findDetail records a finding with a detail that says what decided it.
func (c *cmd) findDetail(class string, sp Span, detail string) {
	c.w.findDetail(c.idx, class, sp, detail)
}

// run executes an inner argv reached through a launcher.
func (c *cmd) run(args []Arg, how string, assigns ...string) int {
	if len(args) == 0 {
		return -1
	}
	return c.w.exec(args, appendVia(c.via, how), assigns, c.in, c.span)
}

// explain records how the program's options were read, for --explain.
func (c *cmd) explain(p *opts) {
	if c.w.opts.Explain {
		c.w.a.Commands[c.idx].Parse = p.describe()
	}
}

// parse reads c's options with s, from argv[1].
func (c *cmd) parse(s *optSpec) opts {
	p := parseOpts(s, c.args, 1)
	c.explain(&p)
	return p
}

// code parses a payload word run as shell code.
func (c *cmd) code(a Arg, how string) {
	via := appendVia(c.via, how)
	if a.Static {
		c.w.payload(a.Value, via, a.Span, int(a.off)-1, stdin{})
		return
	}
	c.dynamic(a)
	c.w.dynamicPayload(a.Value, via, a.Span, stdin{})
}

// codeText parses a payload assembled from several words (eval a b c).
func (c *cmd) codeText(args []Arg, how string) {
	if len(args) == 0 {
		return
	}
	vals := make([]string, len(args))
	static := true
	for i, a := range args {
		vals[i] = a.Value
		if !a.Static {
			static = false
			c.dynamic(a)
		}
	}
	sp := args[0].Span.join(args[len(args)-1].Span)
	off := -1
	if len(args) == 1 {
		off = int(args[0].off) - 1
	}
	if static {
		c.w.payload(strings.Join(vals, " "), appendVia(c.via, how), sp, off, stdin{})
		return
	}
	c.w.dynamicPayload(strings.Join(vals, " "), appendVia(c.via, how), sp, stdin{})
}

// dynamic records that a word that becomes code is not statically known.
func (c *cmd) dynamic(a Arg) {
	c.w.a.Dynamic = true
	c.find(clsDynamic, a.Span)
	c.w.remoteSubst(c.idx, a)
}

// opaqueDetail records that the analysis could not see what runs, and why.
func (c *cmd) opaqueDetail(sp Span, why string) {
	c.w.a.Dynamic = true
	c.findDetail(clsDynamic, sp, why)
}

// remoteSubst flags code that comes from a network fetch or a decoder
// inside a substitution: eval "$(curl …)", bash <(wget …),
// eval "$(echo … | base64 -d)".
func (w *walker) remoteSubst(idx int, a Arg) {
	if a.subst == 0 {
		return
	}
	r := w.substLists[a.subst-1]
	for i := r.lo; i < r.hi; i++ {
		if fetchers[w.a.Commands[i].key()] {
			if strings.HasPrefix(a.Value, "<(") {
				w.find(idx, clsRemoteProc, a.Span)
			} else {
				w.find(idx, clsRemoteSubst, a.Span)
			}
			return
		}
	}
	for i := r.lo; i < r.hi; i++ {
		if isDecoder(&w.a.Commands[i]) {
			w.find(idx, clsDecodeExec, a.Span)
			return
		}
	}
}

// stdinCode handles a shell or interpreter that reads its program from
// standard input.
func (c *cmd) stdinCode(kind string) {
	switch c.in.kind {
	case stdinPipe:
		c.w.meta[c.idx].consumer = kind
	case stdinText:
		if kind != "shell" {
			c.inlineCode(c.name, Arg{Value: c.in.text, Static: c.in.static, Span: c.in.span}, c.name+" <<")
			return
		}
		if c.in.static {
			c.w.payload(c.in.text, appendVia(c.via, c.name+" <<"), c.in.span, -1, stdin{})
			return
		}
		c.w.a.Dynamic = true
		c.find(clsDynamic, c.in.span)
		c.w.dynamicPayload(c.in.text, appendVia(c.via, c.name+" <<"), c.in.span, stdin{})
	case stdinFile:
		// bash < file, python < script.py: runs a file, as bash file does.
	case stdinSubst:
		if text, ok := c.w.procText(c.in.subst); ok {
			if kind == "shell" {
				c.w.payload(text, appendVia(c.via, c.name+" < <(…)"), c.in.span, -1, stdin{})
			} else {
				c.inlineCode(c.name, Arg{Value: text, Static: true, Span: c.in.span}, c.name+" < <(…)")
			}
			return
		}
		c.w.a.Dynamic = true
		c.findDetail(clsStdinShell, c.in.span, "reads its program from a process substitution")
		c.w.remoteSubst(c.idx, Arg{Value: "<(", subst: c.in.subst, Span: c.in.span})
	}
}

// unknownName is a command whose name is computed at run time. What it
// runs is opaque; but if its static arguments have the shape of a
// hardline command (`$cmd -n1 /dev/nvme0n1`, `$(…) -rf /`), the verdict
// is hardline, since a floor must hold for what cannot be named.
func (c *cmd) unknownName() {
	w := c.w
	if len(c.args) < 2 || w.probes >= maxProbes {
		return
	}
	w.probes++
	for _, name := range hardlineShapes {
		p := programs[name]
		before := len(w.a.Findings)
		probe := w.newCmd()
		*probe = *c
		probe.name = name
		probe.args = append([]Arg{{Value: name, Static: true, Span: c.args[0].Span}}, c.args[1:]...)
		p.rule(probe)
		w.freeCmd(probe)
		// Keep what the probe found only if it is a floor.
		kept := w.a.Findings[:before]
		for _, f := range w.a.Findings[before:] {
			if f.Tier == TierHardline {
				f.Detail = "if the computed command is " + name
				kept = append(kept, f)
			}
		}
		w.a.Findings = kept
	}
}

// hardlineShapes are the programs whose hardline shapes an unknown
// command name is tried as.
var hardlineShapes = []string{"rm", "shred", "mkfs", "wipefs", "dd", "blkdiscard", "chmod", "chown", "sgdisk", "fdisk", "sfdisk", "parted", "cryptsetup", "nvme", "sh"}

// callFunc walks the body of a function the line defined, where it is
// called.
func (w *walker) callFunc(c *cmd, fd *funcDef) {
	if w.active[c.name] {
		return
	}
	if w.forkBomb(fd) {
		w.find(c.idx, clsForkBomb, c.span)
	}
	// A body says the same thing at every call with the same kind of
	// stdin, so it is walked once per kind: a script calling log() a
	// thousand times stays linear.
	ek := expansion{fd: fd, in: c.in.kind}
	var lvl *level
	if fd.positional() && allStatic(c.args) && len(c.args) > 1 {
		// Its arguments are its $1…: a call with other arguments says
		// something else.
		lvl = &level{}
		*lvl = *fd.lvl
		lvl.consts = withPositional(fd.lvl.consts, "", words(c.args[1:]))
		ek.args = strings.Join(words(c.args[1:]), "\x00")
	}
	if w.expanded[ek] {
		return
	}
	if w.active == nil {
		w.active = map[string]bool{}
		w.expanded = map[expansion]bool{}
	}
	w.expanded[ek] = true
	w.active[c.name] = true
	saved := w.lvl
	w.lvl = fd.lvl
	if lvl != nil {
		w.lvl = lvl
	}
	w.stmt(fd.decl.Body, appendVia(c.via, "function "+c.name), c.in)
	w.lvl = saved
	delete(w.active, c.name)
}

// key is the command's lookup name (see cmdName), or "" when dynamic.
func (c *Command) key() string {
	if len(c.Argv) == 0 || !c.Argv[0].Static {
		return ""
	}
	return cmdName(c.Argv[0].Value)
}

// newCmd takes a cmd from the walker's free list.
func (w *walker) newCmd() *cmd {
	if n := len(w.free); n > 0 {
		c := w.free[n-1]
		w.free = w.free[:n-1]
		return c
	}
	return new(cmd)
}

// freeCmd returns c to the free list.
func (w *walker) freeCmd(c *cmd) {
	*c = cmd{}
	w.free = append(w.free, c)
}

// allStatic reports whether every arg is static.
func allStatic(args []Arg) bool {
	for _, a := range args {
		if !a.Static {
			return false
		}
	}
	return true
}

// words returns the values of args.
func words(args []Arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasAny reports whether list holds any of vs.
func hasAny(list []string, vs ...string) bool {
	for _, v := range vs {
		if slicesHas(list, v) {
			return true
		}
	}
	return false
}

// hasFlag reports whether words holds one of flags: as written, or, for
// a one-letter flag ("-d"), inside a bundle of short options ("-di").
func hasFlag(words []string, flags ...string) bool {
	for _, w := range words {
		for _, f := range flags {
			if w == f || len(f) == 2 && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w[1:], f[1:]) {
				return true
			}
		}
	}
	return false
}
