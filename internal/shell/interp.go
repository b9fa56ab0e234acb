package shell

import (
	"regexp"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/codescan"
)

// Code carriers: shells, interpreters and the builtins that run text as
// code (eval, trap, source, alias), and env and su, which launch with a
// twist.

var envSpec = spec("+", "0|null", "i|ignore-environment", "u|unset=", "C|chdir=", "S|split-string=", "v|debug",
	"block-signal?", "default-signal?", "ignore-signal?", "list-signal-handling", "a|argv0=", "help", "version")

// ruleEnv: options, NAME=VALUE assignments, then the command. -S splits
// its value into words that take its place (options, assignments, the
// command and its arguments).
func ruleEnv(c *cmd) {
	p := c.parse(envSpec)
	if p.has("help", "version") {
		return
	}
	for _, h := range p.hits {
		if h.def != envSpec.id("S") || !h.hasVal {
			continue
		}
		words, ok := splitString(h.val.Value)
		if !ok || !h.val.Static {
			c.dynamic(h.val)
		}
		if c.w.probes >= maxProbes {
			return
		}
		c.w.probes++
		// The words replace the -S option (and its value) in argv.
		end := h.at + 1
		if h.val.Span != c.args[h.at].Span && h.at+1 < len(c.args) {
			end = h.at + 2
		}
		inner := make([]Arg, 0, h.at+len(words)+len(c.args)-end)
		inner = append(inner, c.args[:h.at]...)
		for _, w := range words {
			inner = append(inner, Arg{Value: w, Static: ok && h.val.Static, Span: h.val.Span})
		}
		inner = append(inner, c.args[end:]...)
		saved := c.args
		c.args = inner
		ruleEnv(c)
		c.args = saved
		return
	}
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of env is not known: what it runs cannot be read")
	}
	rest := p.operands
	var assigns []string
	for len(rest) > 0 && isAssign(rest[0].Value) {
		assigns = append(assigns, rest[0].Value)
		rest = rest[1:]
	}
	if len(rest) == 0 {
		for _, as := range assigns {
			name, val, _ := strings.Cut(as, "=")
			c.w.assignFindings(c.idx, name, val, c.span, c.via)
		}
		return
	}
	if d, ok := p.value("C"); ok {
		defer c.w.chdir(c.idx, d)()
	}
	c.run(rest, "env", assigns...)
}

// splitString splits env -S text with GNU semantics. ok is false when it
// holds a ${VAR} reference (resolved by env at run time).
func splitString(s string) (words []string, ok bool) {
	var b strings.Builder
	in := false
	quote := byte(0)
	flush := func() {
		if in {
			words = append(words, b.String())
		}
		b.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				b.WriteByte(ch)
			}
		case ch == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case '_':
				if quote == '"' {
					b.WriteByte(' ')
				} else {
					flush()
				}
				continue
			case 'c':
				flush()
				return words, true
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			in = true
		case quote == '"':
			if ch == '"' {
				quote = 0
			} else if ch == '$' && i+1 < len(s) && s[i+1] == '{' {
				return words, false
			} else {
				b.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote = ch
			in = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			flush()
		case ch == '#' && !in:
			flush()
			return words, true
		case ch == '$' && i+1 < len(s) && s[i+1] == '{':
			return words, false
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	flush()
	return words, true
}

var suSpec = spec("", "c|command=", "session-command=", "f|fast", "g|group=", "G|supp-group=", "l|login",
	"m|p|preserve-environment", "P|pty", "s|shell=", "w|whitelist-environment=", "h|help", "V|version")

var runuserSpec = suSpec.with("", "u|user=")

// ruleSu handles su and runuser: -c code runs through the target user's
// shell (or -s SHELL); runuser -u USER runs an argv; anything else is a
// shell as another user.
func ruleSu(c *cmd) {
	s := suSpec
	if c.name == "runuser" {
		s = runuserSpec
	}
	p := c.parse(s)
	if p.has("h", "V") {
		return
	}
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of "+c.name+" is not known")
	}
	code, hasCode := p.value("c", "session-command")
	if sh, ok := p.value("s"); ok && hasCode && !shells[cmdName(sh.Value)] {
		// The code is handed to another interpreter: not shell code.
		c.inlineCode(cmdName(sh.Value), code, c.name+" -s "+sh.Value+" -c")
		return
	}
	if hasCode {
		c.code(code, c.name+" -c")
		return
	}
	if c.name == "runuser" && p.has("u") {
		rest := p.operands
		if p.dashdash >= 0 {
			rest = c.args[p.dashdash+1:]
		}
		if len(rest) > 0 {
			c.run(rest, "runuser")
			return
		}
	}
	c.find(clsPrivShell, c.span) // an interactive shell as another user
}

// shells are the programs ruleShell reads.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"rbash": true, "yash": true, "fish": true, "csh": true, "tcsh": true, "posh": true, "oksh": true, "loksh": true, "pdksh": true}

// posixShells read their -c payload as bash does; the others (fish,
// csh) are read as bash where they can be, and are dynamic where not.
var posixShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"rbash": true, "yash": true, "posh": true, "oksh": true, "loksh": true, "pdksh": true}

// ruleShell handles sh/bash/zsh… : -c payloads, scripts, stdin.
func ruleShell(c *cmd) {
	hasC, readStdin := false, false
	i := 1
	for ; i < len(c.args); i++ {
		a := c.args[i].Value
		if a == "--" || a == "-" {
			i++
			break
		}
		if c.name == "fish" && strings.HasPrefix(a, "--") {
			// fish reads its long options with getopt_long: --comm is
			// --command, --init-c is --init-command.
			name, val, hasVal := strings.Cut(a[2:], "=")
			if id, _ := fishSpec.lookupLong(name); id > 0 {
				a = "--" + fishSpec.data().defs[id-1].names[len(fishSpec.data().defs[id-1].names)-1]
				if hasVal {
					a += "=" + val
				}
			}
		}
		switch a {
		case "--rcfile", "--init-file", "--command", "-C":
			if a == "--command" {
				hasC = true
				i++
				goto done
			}
			i++
			continue
		}
		if strings.HasPrefix(a, "--command=") || strings.HasPrefix(a, "--init-command=") {
			_, v, _ := strings.Cut(c.args[i].Value, "=")
			c.shellCode(sub(c.args[i], len(c.args[i].Value)-len(v)))
			return
		}
		if a == "--init-command" && i+1 < len(c.args) {
			c.shellCode(c.args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(a, "--") {
			continue
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' || !c.args[i].Static {
			break
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'c':
				hasC = true
			case 's':
				readStdin = true
			case 'o', 'O':
				if j == len(a)-1 {
					i++ // the option name is the next word
				}
			}
		}
	}
done:
	switch {
	case hasC:
		if i < len(c.args) {
			// sh -c CODE NAME ARGS…: $0 and $1… of the code.
			if extra := c.args[i+1:]; len(extra) > 0 && allStatic(extra) {
				c.w.nextPos = words(extra)
			}
			c.w.nextEnv = c.w.childEnv(c.idx)
			c.shellCode(c.args[i])
			c.w.nextPos, c.w.nextEnv = nil, nil
		}
	case readStdin || i >= len(c.args):
		if privileged(c.via) && c.in.kind == stdinNone {
			c.find(clsPrivShell, c.span)
			return
		}
		c.stdinCode("shell")
	default:
		script := c.args[i]
		if text, ok := c.w.procText(script.subst); ok {
			c.w.payload(text, appendVia(c.via, c.name+" <(…)"), script.Span, -1, stdin{})
			return
		}
		switch {
		case !script.Static || strings.HasPrefix(script.Value, "<("):
			c.dynamic(script)
		case script.Value == "/dev/stdin" || script.Value == "/proc/self/fd/0" || script.Value == "/dev/fd/0":
			c.stdinCode("shell")
		default:
			c.w.ranFile(c.idx, script, "sh")
		}
	}
}

// fishSpec are fish's long options (for their abbreviations).
var fishSpec = spec("", "c|command=", "C|init-command=", "d|debug=", "o|debug-output=", "f|features=", "i|interactive", "l|login",
	"n|no-execute", "N|no-config", "print-rusage-self", "print-debug-categories", "p|profile=", "profile-startup=", "P|private",
	"v|version", "h|help")

// shellCode runs a shell's -c payload; a non-POSIX shell's payload that
// bash cannot read is dynamic rather than malformed.
func (c *cmd) shellCode(a Arg) {
	how := c.name + " -c"
	if posixShells[c.name] || !a.Static {
		c.code(a, how)
		return
	}
	if _, err := parse(a.Value); err != nil {
		c.opaqueDetail(a.Span, c.name+" code that warden cannot read as shell")
		return
	}
	c.code(a, how)
}

// interpreter describes a language runtime's options.
type interpreter struct {
	lang string
	spec *optSpec
	// inline are the options whose value is program text (-c, -e).
	inline []string
	// module are options whose value names what runs instead of a
	// script (-m MODULE): the rest are its arguments.
	module []string
	// stdin: without a script (or with "-"), the program is read from
	// standard input.
	stdin bool
	// edits are options that make it edit its file operands in place.
	edits []string
}

var interpreters = map[string]*interpreter{
	"python": {lang: "python", spec: spec("+", "c=!", "m=!", "W=", "X=", "b", "B", "d", "E", "h|help", "i", "I", "O", "P", "q", "s", "S", "u", "v", "V|version", "x",
		"check-hash-based-pycs="), inline: []string{"c"}, module: []string{"m"}, stdin: true},
	"pypy":       {lang: "python", spec: spec("+", "c=!", "m=!", "W=", "X=", "b", "B", "d", "E", "h|help", "i", "I", "O", "s", "S", "u", "v", "V|version", "x"), inline: []string{"c"}, module: []string{"m"}, stdin: true},
	"perl":       {lang: "perl", spec: spec("+", "e=", "E=", "I=", "M=", "m=", "x?", "i?", "0?#", "l?#", "F=", "C?#", "D?", "d?", "a", "c", "n", "p", "s", "S", "t", "T", "u", "U", "v", "V", "w", "W", "X", "h"), inline: []string{"e", "E"}, stdin: true, edits: []string{"i"}},
	"ruby":       {lang: "ruby", spec: spec("+", "e=", "I=", "r=", "C=", "F=", "E|encoding=", "x?", "i?", "0?#", "K=", "T?", "W?", "a", "c", "d|debug", "h|help", "l", "n", "p", "s", "S", "v|verbose", "w", "y", "version", "copyright", "enable=", "disable=", "jit", "yjit", "dump="), inline: []string{"e"}, stdin: true, edits: []string{"i"}},
	"node":       {lang: "node", spec: spec("+!", "e|eval=", "p|print=", "r|require=", "import=", "loader=", "experimental-loader=", "input-type=", "C|conditions=", "c|check", "i|interactive", "v|version", "h|help", "inspect?", "inspect-brk?", "title=", "stack-size=", "max-old-space-size=", "env-file=", "watch", "test", "enable-source-maps", "no-warnings", "experimental-vm-modules", "experimental-strip-types", "trace-warnings"), inline: []string{"e", "p"}, stdin: true},
	"bun":        {lang: "node", spec: spec("+!", "e|eval=", "p|print=", "r|preload=", "watch", "hot", "smol", "cwd=", "env-file=", "i", "b|bun", "silent", "v|version", "h|help", "revision"), inline: []string{"e", "p"}, stdin: true},
	"php":        {lang: "php", spec: spec("+", "r=", "B=", "R=", "F=", "E=", "f=", "d=", "c=", "z=", "t=", "S=", "n", "a", "l", "s", "w", "i", "m", "v", "h", "e", "H", "q"), inline: []string{"r", "B", "R", "E"}, stdin: true},
	"lua":        {lang: "lua", spec: spec("+", "e=", "l=", "i", "v", "E", "W"), inline: []string{"e"}, stdin: true},
	"luajit":     {lang: "lua", spec: spec("+", "e=", "l=", "b=", "j=", "O?", "i", "v", "E"), inline: []string{"e"}, stdin: true},
	"rscript":    {lang: "r", spec: spec("+!", "e=", "default-packages=", "verbose", "version", "help", "vanilla", "no-environ", "no-site-file", "no-init-file", "restore", "save", "no-save"), inline: []string{"e"}},
	"r":          {lang: "r", spec: spec("+!", "e=", "f|file=", "vanilla", "no-save", "save", "slave", "quiet", "q", "silent", "s", "no-environ", "no-restore", "args", "version", "help", "interactive"), inline: []string{"e"}, stdin: true},
	"osascript":  {lang: "applescript", spec: spec("+", "e=", "l=", "i", "s="), inline: []string{"e"}, stdin: true},
	"tclsh":      {lang: "tcl", spec: spec("+", "encoding="), stdin: true},
	"wish":       {lang: "tcl", spec: spec("+", "encoding="), stdin: true},
	"julia":      {lang: "julia", spec: spec("+!", "e|eval=", "E|print=", "L|load=", "p|procs=", "t|threads=", "O|optimize?", "g?", "q|quiet", "i", "v|version", "h|help", "project?", "startup-file=", "history-file=", "color=", "banner=", "compile="), inline: []string{"e", "E"}, stdin: true},
	"elixir":     {lang: "elixir", spec: spec("+!", "e|eval=", "r=", "S=", "pa=", "pz=", "no-halt", "v|version", "h|help", "sname=", "name=", "cookie=", "erl="), inline: []string{"e"}},
	"erl":        {lang: "erlang", spec: spec("+-!", "eval=", "noshell", "noinput", "s=", "run=", "pa=", "pz=", "sname=", "name=", "setcookie=", "detached", "boot=", "config="), inline: []string{"eval"}, stdin: true},
	"guile":      {lang: "scheme", spec: spec("+", "c=", "e=", "l=", "s=", "L=", "C=", "x=", "q", "h|help", "v|version", "debug", "no-debug", "listen?", "auto-compile", "fresh-auto-compile", "no-auto-compile", "use-srfi="), inline: []string{"c"}, stdin: true},
	"racket":     {lang: "racket", spec: spec("+", "e|eval=", "f|load=", "t|require=", "l|lib=", "r|script=", "u|require-script=", "k=", "m|main", "i|repl", "n|no-lib", "v|version", "h|help", "W|warn="), inline: []string{"e"}, stdin: true},
	"sbcl":       {lang: "lisp", spec: spec("+!", "eval=", "load=", "script?", "non-interactive", "noinform", "no-sysinit", "no-userinit", "disable-debugger", "quit", "core=", "dynamic-space-size=", "control-stack-size=", "version", "help"), inline: []string{"eval"}, stdin: true},
	"clisp":      {lang: "lisp", spec: spec("+", "x=", "i=", "c=", "q", "Q", "norc", "on-error=", "E=", "M=", "K="), inline: []string{"x"}, stdin: true},
	"groovy":     {lang: "groovy", spec: spec("+", "e=", "cp|classpath=", "D|define=", "a|autosplit?", "n", "p", "i?", "l?", "d|debug", "v|version", "h|help"), inline: []string{"e"}},
	"scala":      {lang: "scala", spec: spec("+-", "e=", "cp|classpath=", "nc", "save", "version", "help"), inline: []string{"e"}, stdin: true},
	"ghc":        {lang: "haskell", spec: spec("+", "e="), inline: []string{"e"}},
	"ghci":       {lang: "haskell", spec: spec("+", "e="), stdin: true},
	"irb":        {lang: "ruby", spec: spec("+", "r=", "I=", "f", "d", "w", "W?", "noprompt", "noecho", "simple-prompt", "version", "help"), stdin: true},
	"ipython":    {lang: "python", spec: spec("+", "c=!", "m=!", "i", "quick", "no-banner", "profile=", "ipython-dir=", "help", "version", "HistoryManager.enabled="), inline: []string{"c"}, module: []string{"m"}, stdin: true},
	"jshell":     {lang: "java", spec: spec("+-", "class-path=", "module-path=", "add-modules=", "enable-preview", "startup=", "no-startup", "feedback=", "q", "s", "v", "J=", "R=", "C=", "version", "help"), stdin: true},
	"swift":      {lang: "swift", spec: spec("+"), stdin: true},
	"deno":       {lang: "node"},
	"pwsh":       {lang: "powershell"},
	"powershell": {lang: "powershell"},
	"nodejs":     nil, // like node (see init)
}

func init() {
	interpreters["nodejs"] = interpreters["node"]
	interpreters["pypy3"] = interpreters["pypy"]
}

// ruleInterp reads a language runtime's argv: inline code goes to the code
// analyser; a program read from stdin is stdin code; a script is a file.
func ruleInterp(c *cmd) {
	in := interpreters[c.name]
	switch c.name {
	case "deno":
		ruleDeno(c)
		return
	case "pwsh", "powershell":
		rulePowershell(c)
		return
	}
	p := c.parse(in.spec)
	if p.has("h", "help", "v", "V", "version") && len(p.operands) == 0 && len(p.values(in.inline...)) == 0 {
		return
	}
	if len(p.unknown) > 0 {
		// Options we do not know may take a value; what the program is
		// may then be misread. Not safe.
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of "+c.name+" is not known")
	}
	if codes := p.values(in.inline...); len(codes) > 0 {
		// Several -e options are one program, joined by newlines (perl,
		// ruby).
		src := codes[0]
		for _, more := range codes[1:] {
			src.Value += "\n" + more.Value
			src.Static = src.Static && more.Static
			src.Span = src.Span.join(more.Span)
			src.off = 0
		}
		c.inlineCode(in.lang, src, c.name+" -"+strings.TrimLeft(c.args[p.hits[0].at].Value, "-")[:1])
		if p.has(in.edits...) {
			c.writes(p.operands)
		} else {
			c.reads(p.operands) // perl -ne …, python -c … FILE: the code reads its operands
		}
		return
	}
	if c.name == "bun" && len(p.operands) > 0 {
		switch p.operands[0].Value {
		case "x":
			if len(p.operands) > 1 {
				c.run(p.operands[1:], "bun x")
			}
			return
		case "run":
			p.operands = p.operands[1:]
		}
	}
	if m, ok := p.value(in.module...); ok {
		// A module that is a program of its own (pip, twine, poetry, uv)
		// does what that program does; another runs a file we cannot see.
		if name := cmdName(m.Value); m.Static && programs[name] != nil && !shells[name] && interpreters[name] == nil && c.name != "ipython" {
			args := append([]Arg{{Value: name, Static: true, Span: m.Span}}, p.operands...)
			c.run(args, c.name+" -m")
		}
		return
	}
	if len(p.operands) == 0 || p.operands[0].Value == "-" {
		if privileged(c.via) && c.in.kind == stdinNone {
			c.findDetail(clsPrivShell, c.span, c.name+" prompt as another user") // sudo python3
			return
		}
		if in.stdin {
			c.stdinCode("interp")
		}
		return
	}
	c.w.ranFile(c.idx, p.operands[0], in.lang)
}

// ruleDeno: deno eval CODE, deno run - (stdin), deno run FILE.
func ruleDeno(c *cmd) {
	if len(c.args) < 2 {
		c.stdinCode("interp")
		return
	}
	rest := c.args[2:]
	var ops []Arg
	for _, a := range rest {
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			ops = append(ops, a)
		}
	}
	switch c.args[1].Value {
	case "eval":
		if len(ops) > 0 {
			c.inlineCode("node", ops[0], "deno eval")
		}
	case "run", "repl":
		if len(ops) == 0 || ops[0].Value == "-" {
			c.stdinCode("interp")
		}
	}
}

// inlineCode judges program text run by an interpreter with the code
// analyser the code tool is judged by (internal/codescan), so the same
// source gets the same verdict either way.
func (c *cmd) inlineCode(lang string, src Arg, how string) {
	c.w.code(c.idx, lang, src, appendVia(c.via, how))
}

// wardenMarks are the tails of warden's default locations, as program
// text that joins them to a home would hold them.
var wardenMarks = []string{".config/warden", ".local/state/warden", "Application Support/warden", "/etc/warden"}

// namesWarden returns the part of program text that names warden's own
// state or configuration (a default location, or one of the owner's
// protected paths), or "".
func (w *walker) namesWarden(code string) string {
	for _, m := range wardenMarks {
		if strings.Contains(code, m) {
			return m
		}
	}
	for _, p := range w.opts.ProtectedPaths {
		if len(p) > 1 && strings.Contains(code, p) {
			return p
		}
	}
	return ""
}

// code judges program text in lang: the shell commands equivalent to
// what it does (its spawns, file and network operations) are analysed
// here as one script, its other findings are added, and code the
// analyser could not read completely (or at all: a language it does not
// know, text computed at run time) is opaque.
func (w *walker) code(idx int, lang string, src Arg, via []string) {
	if !src.Static {
		w.a.Dynamic = true
		w.findDetail(idx, clsDynamic, src.Span, lang+" code computed at run time")
		w.remoteSubst(idx, src)
		return
	}
	canon, ok := codescan.Language(lang)
	if !ok {
		w.findDetail(idx, clsInlineCode, src.Span, lang+" code, which warden cannot read")
		return
	}
	if canon == codescan.Shell {
		w.payload(src.Value, via, src.Span, int(src.off)-1, stdin{})
		return
	}
	if where := w.namesWarden(src.Value); where != "" {
		// However the code builds the path (getenv("HOME") . "…",
		// Dir.home + "…"), text that names warden's own files is
		// reaching them.
		w.findTier(idx, clsWardenSelf, TierHardline, src.Span, lang+" code names "+where)
	}
	r := codescan.Analyze(canon, src.Value)
	for _, line := range r.Commands {
		// Code that deletes, moves, writes or changes the mode of a path
		// it computes at run time may reach any path: what it touches
		// cannot be seen (the same path written in the code is judged).
		if f := strings.Fields(line); len(f) > 0 && holeTargets[f[0]] && strings.Contains(line, "$__dyn") {
			r.Complete = false
			r.Reasons = append(r.Reasons, f[0]+" of a path computed at run time")
			break
		}
	}
	if len(r.Commands) > 0 {
		script := strings.Join(r.Commands, "\n")
		if _, err := parse(script); err == nil {
			w.payload(script, appendVia(via, canon+" code does"), src.Span, -1, stdin{})
		} else {
			r.Complete = false
			r.Reasons = append(r.Reasons, "its effects could not be read as commands")
		}
	}
	for _, f := range r.Findings {
		tier := TierDangerous
		if f.Tier == codescan.Hardline {
			tier = TierHardline
		}
		w.findTier(idx, f.Class, tier, src.Span, f.Description)
	}
	if !r.Complete {
		w.findDetail(idx, clsInlineCode, src.Span, canon+" code: "+strings.Join(r.Reasons, "; "))
	}
}

// holeTargets are the commands codescan renders file operations as whose
// target, computed at run time, decides how bad they are.
var holeTargets = map[string]bool{"rm": true, "rmdir": true, "mv": true, "cp": true, "chmod": true, "chown": true, "ln": true,
	":": true, "truncate": true, "dd": true, "tar": true}

// ranFile notes a program run from a file, by an interpreter of lang (""
// for the file's own #! line, or shell): a script the line wrote earlier
// is judged by what was written (write then run); one whose text is not
// known is exec.write_run.
func (w *walker) ranFile(idx int, f Arg, lang string) {
	if !f.Static || len(w.written) == 0 {
		return
	}
	text, ok := w.written[w.pathKey(f.Value)]
	if !ok {
		return
	}
	if !text.known {
		w.findDetail(idx, clsWriteRun, f.Span, "runs "+f.Value+", written earlier in the line")
		return
	}
	if lang == "" {
		lang = "sh"
		if first, _, _ := strings.Cut(text.text, "\n"); strings.HasPrefix(first, "#!") {
			fields := strings.Fields(strings.TrimPrefix(first, "#!"))
			if len(fields) > 0 {
				lang = cmdName(fields[0])
				if lang == "env" && len(fields) > 1 {
					lang = cmdName(fields[len(fields)-1])
				}
			}
		}
	}
	via := appendVia(w.a.Commands[idx].Via, "script written earlier")
	if shells[lang] {
		w.payload(text.text, via, f.Span, -1, stdin{})
		return
	}
	w.code(idx, lang, Arg{Value: text.text, Static: true, Span: f.Span}, via)
}

// ruleEval runs its arguments, joined with spaces, as shell code.
func ruleEval(c *cmd) {
	args := c.args[1:]
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	c.codeText(args, "eval")
}

// ruleTrap: trap [-lp] [[--] ACTION SIGNAL…]: ACTION is code run later.
func ruleTrap(c *cmd) {
	args := c.args[1:]
	for len(args) > 0 && (args[0].Value == "-l" || args[0].Value == "-p" || args[0].Value == "-lp" || args[0].Value == "-pl") {
		return // lists, runs nothing
	}
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) >= 2 && args[0].Value != "-" {
		c.code(args[0], "trap")
	}
}

// ruleSource: source FILE runs a file; from a substitution or stdin, code
// the analyser cannot see (or the stdin text it can).
func ruleSource(c *cmd) {
	args := c.args[1:]
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	f := args[0]
	if text, ok := c.w.procText(f.subst); ok {
		c.w.payload(text, appendVia(c.via, c.name+" <(…)"), f.Span, -1, stdin{})
		return
	}
	switch {
	case strings.HasPrefix(f.Value, "<(") || !f.Static:
		c.dynamic(f)
	case f.Value == "/dev/stdin" || f.Value == "-" || f.Value == "/proc/self/fd/0" || f.Value == "/dev/fd/0":
		c.stdinCode("shell")
	default:
		c.w.ranFile(c.idx, f, "sh")
	}
}

// ruleAlias: an alias body is code that runs where the alias is used.
func ruleAlias(c *cmd) {
	for _, a := range c.args[1:] {
		name, val, ok := strings.Cut(a.Value, "=")
		if !ok || val == "" {
			continue
		}
		inner := sub(a, len(name)+1)
		c.code(inner, "alias "+name)
	}
}

// ruleBusybox: busybox APPLET ARGS runs the applet.
func ruleBusybox(c *cmd) {
	if len(c.args) > 1 && !strings.HasPrefix(c.args[1].Value, "-") {
		c.run(c.args[1:], c.name)
	}
}

var parallelSpec = spec("+", "j|jobs|P|max-procs=", "S|sshlogin=", "a|arg-file=", "d|delimiter=", "colsep|C=", "timeout=", "joblog=",
	"results|res=", "delay=", "halt|halt-on-error=", "n|max-args=", "workdir|wd=", "tmpdir=", "I|replace=", "i?", "N=", "L|max-lines=",
	"X", "k|keep-order", "v", "q|quote", "0|null", "u|ungroup", "line-buffer", "tag", "eta", "progress", "bar", "dry-run",
	"no-notice", "nonall", "onall", "pipe", "pipepart", "block=", "env=", "shebang", "version", "help", "will-cite", "citation", "retries=", "memfree=", "load=", "nice=", "sshloginfile|slf=", "transferfile|tf=", "return=", "cleanup", "trc=", "basefile|bf=", "group", "r|no-run-if-empty", "E=", "e|eof?", "s|max-chars=", "x|xargs", "m", "t|verbose", "p|interactive",
	"id|semaphorename=", "fg", "bg", "W|wait", "semaphoretimeout|st=", "semaphore")

// ruleParallel: the command template (up to ":::") is shell code; without
// one, each input line is a command.
func ruleParallel(c *cmd) {
	p := c.parse(parallelSpec)
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of parallel is not known")
	}
	end := 0
	for end < len(p.operands) && !strings.HasPrefix(p.operands[end].Value, ":::") {
		end++
	}
	if end > 0 {
		c.codeText(p.operands[:end], "parallel")
		// Each input after ::: is quoted into the template ({} or at
		// its end): parallel cat ::: FILE reads FILE.
		if end < len(p.operands) && p.operands[end].Value == ":::" {
			inputs := p.operands[end+1:]
			for i, in := range inputs {
				if i >= maxLoopValues || strings.HasPrefix(in.Value, ":::") {
					break
				}
				q := in
				q.Value = quoteWord(in.Value)
				if !in.Static {
					// Known at run time only: one word the payload
					// cannot see (rm -rf {} of it is delete.unknown).
					q.Value, q.Static = `"$__parallel_input"`, true
				}
				c.codeText(fillTemplate(p.operands[:end], q), "parallel :::")
			}
		}
		return
	}
	if c.in.kind == stdinPipe || c.in.kind == stdinText {
		c.stdinCode("shell") // each input line is a command
	}
}

// fillTemplate puts in where the template says {}, or after it.
func fillTemplate(tmpl []Arg, in Arg) []Arg {
	out := make([]Arg, 0, len(tmpl)+1)
	placed := false
	for _, a := range tmpl {
		if strings.Contains(a.Value, "{}") {
			a.Value = strings.ReplaceAll(a.Value, "{}", in.Value)
			a.Static = a.Static && in.Static
			placed = true
		}
		out = append(out, a)
	}
	if !placed {
		out = append(out, in)
	}
	return out
}

// ruleSSH: ssh HOST CODE; -o options that run programs.
func ruleSSH(c *cmd) {
	l := launchers["ssh"]
	p := c.parse(l.spec)
	for _, o := range p.values("o") {
		c.sshOption(o)
	}
	for _, v := range p.values("F") {
		_ = v // a config file may hold ProxyCommand: it is a file we cannot see
	}
	ruleLaunch(c)
	c.w.meta[c.idx].sends = true
	if c.in.kind == stdinFile {
		c.uploadFiles([]Arg{c.in.file})
	}
}

func (c *cmd) sshOption(a Arg) {
	key, val, ok := strings.Cut(a.Value, "=")
	if !ok {
		key, val, _ = strings.Cut(a.Value, " ")
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
		v := a
		v.Value, v.off = val, 0
		c.programOption(v, "ssh -o "+key)
	}
}

// awkExec finds what makes awk run a command: system(), a pipe to or
// from a command string, a coprocess.
var awkExec = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`system\s*\(|\|\s*"|"\s*\|\s*getline|\|&|\|\s*[a-zA-Z_]`)
})

// awkSystem are system("…") calls with a literal command.
var awkSystem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`system\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)`) })

// awkWrite are writes to a literal file: print > "f", printf >> "f".
var awkWrite = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`>>?\s*"((?:[^"\\]|\\.)*)"`) })

var awkSpec = spec("", "f|file=", "v|assign=", "F|field-separator=", "E|exec=", "i|include=", "l|load=", "b|characters-as-bytes",
	"c|traditional", "C|copyright", "d|dump-variables?", "D|debug?", "e|source=", "g|gen-pot", "h|help", "I|trace", "L|lint?",
	"M|bignum", "N|use-lc-numeric", "n|non-decimal-data", "o|pretty-print?", "O|optimize", "p|profile?", "P|posix", "r|re-interval",
	"s|no-optimize", "S|sandbox", "t|lint-old", "V|version", "W=")

// ruleAwk: the program text may run commands (system, pipes) and write
// files (print > "f").
func ruleAwk(c *cmd) {
	p := c.parse(awkSpec)
	if p.has("f", "E", "h", "V") {
		return // a program file we cannot see, or help
	}
	progs := p.values("e")
	ops := p.operands
	if len(progs) == 0 {
		if len(ops) == 0 {
			return
		}
		progs, ops = ops[:1], ops[1:]
	}
	var files []Arg
	for _, op := range ops {
		if !isAssign(op.Value) {
			files = append(files, op) // awk reads its file operands (not VAR=value ones)
		}
	}
	c.reads(files)
	for _, prog := range progs {
		if p.has("S") {
			continue // --sandbox: no system(), no redirections
		}
		for _, m := range awkSystem().FindAllStringSubmatch(prog.Value, -1) {
			c.code(Arg{Value: unescapeAwk(m[1]), Static: prog.Static, Span: prog.Span}, "awk system()")
		}
		stripped := awkSystem().ReplaceAllString(prog.Value, "")
		if awkExec().MatchString(stripped) || !prog.Static {
			c.inlineCode("awk", prog, "awk")
		}
		for _, m := range awkWrite().FindAllStringSubmatch(prog.Value, -1) {
			c.writes([]Arg{{Value: unescapeAwk(m[1]), Static: prog.Static, Span: prog.Span}})
		}
	}
	_ = ops
}

func unescapeAwk(s string) string {
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(s)
}

// quoteWord quotes an argument's value for a payload, so that the
// payload's shell reads it back as the one word it was. A leading ~
// (the analyser keeps the home symbolic; the outer shell had expanded
// it) stays outside the quotes.
func quoteWord(v string) string {
	home := ""
	if strings.HasPrefix(v, "~") {
		i := strings.IndexByte(v, '/')
		if i < 0 {
			i = len(v)
		}
		home, v = v[:i], v[i:]
	}
	if v == "" {
		return home
	}
	return home + "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
