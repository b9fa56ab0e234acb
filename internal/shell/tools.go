package shell

import "strings"

// Family tools: programs that run other programs through an option (rg
// --pre, sort --compress-program, man -P, tcpdump -z), editors and pagers
// with command options (vim -c '!…', emacs --eval, less +!…), debuggers
// and profilers (gdb, perf), terminal multiplexers and terminal emulators
// (tmux, screen, xterm -e), and the programs that print secrets.

var _ = family(func() {
	register("tools", ruleRg, "rg")
	register("tools", func(c *cmd) { c.programOptions(sortSpec, "compress-program") }, "sort")
	register("tools", func(c *cmd) { c.recursiveReads(c.programOptions(agSpec, "pager"), 0) }, "ag")
	register("tools", ruleMan, "man")
	register("tools", func(c *cmd) { c.programOptions(tcpdumpSpec, "z") }, "tcpdump")
	register("tools", ruleVim, "vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "rvim", "nvi", "elvis")
	register("tools", ruleEmacs, "emacs", "emacsclient")
	register("tools", ruleLess, "less", "more")
	register("tools", ruleGdb, "gdb", "lldb")
	register("tools", rulePerf, "perf")
	register("tools", ruleTmux, "tmux")
	register("tools", ruleScreen, "screen")
	register("tools", ruleTerminal, "xterm", "uxterm", "gnome-terminal", "konsole", "xfce4-terminal", "alacritty", "kitty", "wezterm",
		"terminator", "urxvt", "rxvt", "st", "foot", "tilix", "lxterminal", "mate-terminal", "qterminal", "x-terminal-emulator", "terminology", "sakura", "guake", "cool-retro-term")
	register("tools", ruleSecretTool, "security", "secret-tool", "pass", "gopass", "op", "vault", "bw", "lpass", "keyring", "kwallet-query", "gpg", "gpg2", "age", "sops", "aws-vault", "doppler", "chamber")
	register("tools", ruleMake, "make", "gmake")
	register("tools", ruleGrep, "grep", "egrep", "fgrep", "ack", "ugrep")
})

// programOptions reads c's options with sp and judges the values of the
// named ones as programs it runs (sort --compress-program, man -P).
func (c *cmd) programOptions(sp *optSpec, names ...string) opts {
	p := c.parse(sp)
	for _, n := range names {
		for _, v := range p.values(n) {
			c.programOption(v, c.name+" --"+n)
		}
	}
	return p
}

var (
	sortSpec = spec("", "b|ignore-leading-blanks", "d|dictionary-order", "f|ignore-case", "g|general-numeric-sort", "i|ignore-nonprinting",
		"M|month-sort", "h|human-numeric-sort", "n|numeric-sort", "R|random-sort", "random-source=", "r|reverse", "sort=", "V|version-sort",
		"batch-size=", "c|check?", "C", "compress-program=", "debug", "files0-from=", "k|key=", "m|merge", "o|output=", "s|stable",
		"S|buffer-size=", "t|field-separator=", "T|temporary-directory=", "parallel=", "u|unique", "z|zero-terminated", "help", "version")
	agSpec = spec("", "pager=", "G|file-search-regex=", "ignore=", "ignore-dir=", "A|after=", "B|before=", "C|context=", "m|max-count=",
		"p|path-to-ignore=", "depth=", "workers=", "color-line-number=", "color-match=", "color-path=", "g=", "file-search-regex=")
	rgSpec = spec("!", "pre=", "hostname-bin=", "e|regexp=", "f|file=", "g|glob=", "iglob=", "t|type=", "T|type-not=", "type-add=",
		"type-clear=", "m|max-count=", "A|after-context=", "B|before-context=", "C|context=", "context-separator=",
		"field-match-separator=", "field-context-separator=", "E|encoding=", "j|threads=", "M|max-columns=", "d|max-depth=",
		"max-filesize=", "path-separator=", "pre-glob=", "r|replace=", "sort=", "sortr=", "color=", "colors=", "engine=",
		"dfa-size-limit=", "regex-size-limit=", "ignore-file=", "generate=", "hyperlink-format=", "V|version", "h|help")
	tcpdumpSpec = spec("", "z=", "Z|relinquish-privileges=", "w=", "r=", "i|interface=", "c=", "C=", "G=", "W=", "s|snapshot-length=",
		"E=", "F=", "j|time-stamp-type=", "T=", "y|linktype=", "B|buffer-size=", "M=", "V=", "Q|direction=", "time-stamp-precision=",
		"micro", "nano", "count", "print", "immediate-mode", "version", "help")
	manSpec = spec("", "P|pager=", "H|html?", "E|encoding=", "L|locale=", "M|manpath=", "S|s|sections=", "m|systems=", "p|preprocessor=",
		"R|recode=", "T|troff-device?", "X|gxditview?", "C|config-file=", "r|prompt=", "l|local-file", "k|apropos", "K|global-apropos",
		"f|whatis", "w|where|path|location", "W|where-cat|location-cat", "a|all", "u|update", "c|catman", "d|debug", "D|default",
		"i|ignore-case", "I|match-case", "t|troff", "Z|ditroff", "e|extension=", "warnings?", "regex", "wildcard", "names-only",
		"no-subpages", "no-hyphenation", "no-justification", "7|ascii", "h|help", "V|version")
)

// programOption records an option that runs a program and analyses it.
func (c *cmd) programOption(a Arg, how string) {
	if !knownHelper(a) {
		c.findDetail(clsProgramOption, a.Span, how)
	}
	if strings.TrimSpace(a.Value) == "" {
		return
	}
	c.code(a, how)
}

// helpers are programs that program-bearing options usually name: pagers
// and compressors. A bare one (no arguments but flags, nothing dynamic)
// is what the option is for, not a way to run something else.
var helpers = map[string]bool{
	"cat": true, "less": true, "more": true, "most": true, "bat": true, "delta": true, "diff-so-fancy": true, "head": true, "tail": true,
	"gzip": true, "gunzip": true, "pigz": true, "xz": true, "unxz": true, "zstd": true, "unzstd": true, "bzip2": true, "pbzip2": true,
	"lz4": true, "lzma": true, "lzip": true, "brotli": true, "ssh": true, "vim": true, "vi": true, "nvim": true, "nano": true, "emacs": true,
	"code": true, "subl": true,
}

func knownHelper(a Arg) bool {
	if !a.Static {
		return false
	}
	f := strings.Fields(a.Value)
	if len(f) == 0 || !helpers[baseName(f[0])] {
		return false
	}
	for _, w := range f[1:] {
		if !strings.HasPrefix(w, "-") || strings.ContainsAny(w, "$`;|&<>()'\"") {
			return false
		}
	}
	return true
}

func ruleRg(c *cmd) {
	c.recursiveReads(c.programOptions(rgSpec, "pre", "hostname-bin"), 0)
}

var grepSpec = spec("", "e|regexp=", "f|file=", "m|max-count=", "A|after-context=", "B|before-context=", "C|context=", "d|directories=",
	"D|devices=", "exclude=", "exclude-from=", "exclude-dir=", "include=", "label=", "group-separator=", "binary-files=", "color|colour?",
	"r|recursive", "R|dereference-recursive", "E|extended-regexp", "F|fixed-strings", "G|basic-regexp", "P|perl-regexp", "i|ignore-case",
	"no-ignore-case", "v|invert-match", "w|word-regexp", "x|line-regexp", "c|count", "L|files-without-match", "l|files-with-matches",
	"o|only-matching", "q|quiet|silent", "s|no-messages", "b|byte-offset", "H|with-filename", "h|no-filename", "n|line-number",
	"T|initial-tab", "Z|null", "z|null-data", "a|text", "I", "U|binary", "line-buffered", "V|version", "help", "y")

// ruleGrep: a recursive grep reads whole trees (a home directory holds
// keys); its operands are read like any command's.
func ruleGrep(c *cmd) {
	p := c.parse(grepSpec)
	if p.has("r", "R") {
		skip := 1 // the pattern, unless -e or -f gave it
		if p.has("e", "f") {
			skip = 0
		}
		c.recursiveReads(p, skip)
	}
}

// recursiveReads judges the operands of a recursive reader as trees, but
// the first skip (the pattern). rg and ag search directories by default.
func (c *cmd) recursiveReads(p opts, skip int) {
	ops := p.operands
	if c.name == "rg" || c.name == "ag" {
		skip = 1
		if c.name == "rg" && p.has("e", "f") || c.name == "ag" && p.has("G") {
			skip = 0
		}
	}
	if len(ops) < skip {
		return
	}
	c.tree(ops[skip:], accRead)
}

// ruleMan: -P/--pager name a program; -H/--html open a browser.
func ruleMan(c *cmd) {
	p := c.programOptions(manSpec, "P")
	if v, ok := p.value("H"); ok && v.Value != "" {
		c.programOption(v, "man --html")
	} else if p.has("H") {
		c.find(clsProgramOption, c.span)
	}
}

// exCommand judges one ex command (vim -c, +cmd): "!cmd" and ":!cmd" run
// a shell command; system(), terminal, and r !cmd too; w FILE writes.
func (c *cmd) exCommand(a Arg, how string) {
	v := strings.TrimLeft(a.Value, ": \t")
	for _, pre := range []string{"silent!", "silent", "exe", "execute", "call", "sil", "keepalt", "noautocmd"} {
		if strings.HasPrefix(v, pre+" ") {
			v = strings.TrimLeft(v[len(pre):], " \t")
		}
	}
	switch {
	case strings.HasPrefix(v, "!"):
		c.code(Arg{Value: strings.TrimPrefix(v, "!"), Static: a.Static, Span: a.Span}, how)
	case strings.HasPrefix(v, "r !") || strings.HasPrefix(v, "r!") || strings.HasPrefix(v, "read !") || strings.HasPrefix(v, "w !") || strings.HasPrefix(v, "w!!"):
		_, after, _ := strings.Cut(v, "!")
		c.code(Arg{Value: after, Static: a.Static, Span: a.Span}, how)
	case strings.HasPrefix(v, "term") || strings.Contains(v, "system(") || strings.Contains(v, "systemlist(") || strings.Contains(v, "jobstart(") ||
		strings.HasPrefix(v, "py") || strings.HasPrefix(v, "lua") || strings.HasPrefix(v, "perl") || strings.HasPrefix(v, "ruby") || strings.HasPrefix(v, "so"):
		c.inlineCode("vim", a, how)
	case strings.HasPrefix(v, "w ") || strings.HasPrefix(v, "write ") || strings.HasPrefix(v, "saveas "):
		_, f, _ := strings.Cut(v, " ")
		c.writes([]Arg{{Value: strings.TrimSpace(f), Static: a.Static, Span: a.Span}})
	}
}

var vimSpec = spec("", "c=", "cmd=", "S=", "u=", "U=", "i=", "T=", "w=", "W=", "s=", "t=", "q=", "r?", "L?", "o?", "O?", "p?", "V?",
	"D", "e", "E", "b", "l", "C", "N", "n", "x", "X", "y", "Z", "A", "F", "H", "m", "M", "R", "g", "f", "d", "h|help", "v", "version",
	"noplugin", "clean", "headless", "embed", "listen=", "startuptime=", "api-info", "remote", "remote-silent", "remote-wait",
	"remote-wait-silent", "remote-tab?", "remote-send=", "remote-expr=", "serverlist", "servername=", "literal", "nofork",
	"not-a-term", "ttyfail", "log=")

var vimExSpec = func() *optSpec {
	sp := *vimSpec.with("", "s")
	return &sp
}()

// ruleVim: -c CMD, --cmd CMD and +CMD run ex commands (-cCMD too); the
// files are edited (written); -S FILE sources a script we cannot see.
func ruleVim(c *cmd) {
	sp := vimSpec
	if c.name == "ex" || hasWord(c.args, "-e", "-E", "-es", "-Es") {
		sp = vimExSpec // in Ex mode -s is silent mode, not -s SCRIPTIN
	}
	p := c.parse(sp)
	for _, v := range p.values("c", "cmd") {
		c.exCommand(v, c.name+" -c")
	}
	for _, v := range p.values("remote-send", "remote-expr") {
		c.inlineCode("vim", v, c.name+" --remote")
	}
	var files []Arg
	for _, op := range p.operands {
		if strings.HasPrefix(op.Value, "+") && len(op.Value) > 1 {
			c.exCommand(sub(op, 1), c.name+" +")
			continue
		}
		files = append(files, op)
	}
	if c.name != "view" && !p.has("R") {
		c.writes(files)
	}
}

// ruleEmacs: --eval EXPR and -f FUNC run Lisp; files are edited.
func ruleEmacs(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		switch v := a.Value; {
		case (v == "--eval" || v == "-eval" || v == "--execute" || v == "-e") && i+1 < len(c.args):
			i++
			c.inlineCode("elisp", c.args[i], c.name+" --eval")
		case strings.HasPrefix(v, "--eval="):
			c.inlineCode("elisp", sub(a, len("--eval=")), c.name+" --eval")
		case (v == "-l" || v == "--load" || v == "-f" || v == "--funcall" || v == "--script" || v == "-x") && i+1 < len(c.args):
			i++
		}
	}
}

// ruleLess: +CMD runs less commands at start, and !CMD in one runs a
// shell command; LESSOPEN is judged as an assignment.
func ruleLess(c *cmd) {
	for _, a := range c.args[1:] {
		v := a.Value
		if strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-+") {
			if i := strings.IndexByte(v, '!'); i >= 0 {
				c.code(sub(a, i+1), c.name+" +!")
			}
		}
	}
}

var (
	// gdb reads its options with getopt_long_only: one dash will do
	// (-ex, -batch, -args).
	gdbSpec = spec("-", "args=!", "batch", "batch-silent", "cd=", "x|command=", "c|core=", "D|data-directory=", "d|directory=",
		"ex|eval-command=", "iex|init-eval-command=", "ix|init-command=", "nh", "n|nx", "nw", "p|pid=", "q|quiet|silent", "readnow",
		"readnever", "return-child-result", "s|symbols=", "se=", "e|exec=", "statistics", "tty=", "tui", "version", "write", "help",
		"interpreter=", "i=", "l=", "b=", "baud=", "configuration", "early-init-command=", "eix=", "early-init-eval-command=", "eiex=")
	lldbSpec = spec("", "o|one-line=", "O|one-line-before-file=", "k|one-line-on-crash=", "K|source-on-crash=", "s|source=",
		"S|source-before-file=", "b|batch", "x|no-lldbinit", "X|no-use-colors", "p|attach-pid=", "n|attach-name=", "w|wait-for",
		"c|core=", "f|file=", "a|arch=", "l|script-language=", "Q|source-quietly", "e|editor", "d|debug", "v|version", "h|help",
		"P|python-path", "r|repl?", "R|repl-language=", "capture", "capture-path=")
)

// ruleGdb: the program (gdb --args PROG ARGS, lldb -- PROG ARGS, or
// the first operand) runs under the debugger (on -ex run, or later: it
// is judged as if it ran); commands given with -ex or -o may run shell
// commands (shell, !, platform shell) or Python.
func ruleGdb(c *cmd) {
	sp, cmds := gdbSpec, []string{"ex", "iex", "eiex"}
	if c.name == "lldb" {
		sp, cmds = lldbSpec, []string{"o", "O", "k"}
	}
	p := c.parse(sp)
	// Attaching to a running process (gdb -p PID, gdb PROG PID, lldb -p
	// or -n) reads and writes its memory.
	if p.has("p") || c.name == "lldb" && p.has("n") || c.name == "gdb" && len(p.operands) == 2 && (isDigits(p.operands[1].Value) || !p.operands[1].Static) {
		c.find(clsProcMem, c.span)
	}
	for _, o := range cmds {
		for _, v := range p.values(o) {
			c.debuggerCommand(v)
		}
	}
	if v, ok := p.value("args"); ok {
		c.run(append([]Arg{v}, p.operands...), c.name+" --args")
		return
	}
	if c.name == "lldb" && p.dashdash >= 0 && p.dashdash+1 < len(c.args) {
		c.run(c.args[p.dashdash+1:], "lldb --")
	}
}

// debuggerCommand judges one gdb or lldb command.
func (c *cmd) debuggerCommand(a Arg) {
	t := strings.TrimSpace(a.Value)
	if f := strings.Fields(t); len(f) > 0 && (f[0] == "attach" || f[0] == "at" || f[0] == "gcore" || f[0] == "generate-core-file" ||
		len(f) > 1 && f[0] == "process" && (f[1] == "attach" || f[1] == "a")) {
		c.find(clsProcMem, a.Span)
		return
	}
	for _, pre := range []string{"platform shell ", "shell ", "!"} {
		if strings.HasPrefix(t, pre) {
			c.code(Arg{Value: strings.TrimPrefix(t, pre), Static: a.Static, Span: a.Span}, c.name+" shell")
			return
		}
	}
	if strings.HasPrefix(t, "python") || strings.HasPrefix(t, "pipe") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "script") ||
		strings.HasPrefix(t, "source") || strings.HasPrefix(t, "command script") {
		c.inlineCode(c.name, a, c.name+" command")
	}
}

// perfSpec reads the options of perf record, stat, trace and friends
// (one table: their options seldom clash).
var perfSpec = spec("+", "e|event=", "filter=", "exclude-perf", "a|all-cpus", "p|pid=", "t|tid=", "u|uid=", "r|repeat|realtime=",
	"no-buffering", "R|raw-samples", "c|count=", "o|output=", "append", "i|no-inherit|input=", "F|freq|pf=", "m|mmap-pages=", "g",
	"call-graph=", "q|quiet", "v|verbose", "s|stat|summary", "d|data|detailed", "phys-data", "T|timestamp|transaction|time",
	"P|period", "n|no-samples|null", "N|no-buildid-cache", "B|no-buildid|big-num", "G|cgroup=", "b|branch-any", "j|branch-filter|json?",
	"W|weight", "namespaces", "all-cgroups", "per-thread", "D|delay=", "I|intr-regs|interval-print?", "user-regs=", "running-time",
	"k|clockid=", "S|snapshot|with-summary?", "aux-sample?", "proc-map-timeout=", "switch-events", "vmlinux=", "buildid-all",
	"buildid-mmap", "mmap-flush=", "z|compression-level?", "all-kernel", "all-user", "kernel-callchains", "user-callchains",
	"timestamp-filename", "timestamp-boundary", "switch-output?", "switch-output-event=", "switch-max-files=", "dry-run", "synth=",
	"tail-synthesize", "overwrite", "strict-freq", "affinity=", "max-size=", "num-thread-synthesize=", "pfm-events=", "control=",
	"threads?", "debuginfod?", "off-cpu", "setup-filter=", "C|cpu=", "x|field-separator=", "pre=", "post=", "A|no-aggr",
	"M|metrics=", "topdown", "td-level=", "smi-cost", "per-socket", "per-die", "per-core", "per-node", "per-cache", "interval-count=",
	"interval-clear", "timeout=", "log-fd=", "no-merge", "iostat?", "for-each-cgroup=", "no-csv-summary", "metric-only", "duration=",
	"syscalls", "no-syscalls", "sched", "kernel-syscall-graph", "max-events=", "max-stack=", "min-stack=", "sort-events", "f|force",
	"comm", "no-comm", "errno-summary", "tool_stats", "map-dump=", "switch-on=", "switch-off=", "show-on-off-events", "failure",
	"h|help")

// rulePerf: perf record/stat/trace [opts] [--] CMD runs CMD; perf stat
// --pre and --post run commands too.
func rulePerf(c *cmd) {
	g := parseOpts(plainSpec, c.args, 1)
	if len(g.operands) == 0 {
		return
	}
	switch verb := g.operands[0].Value; verb {
	case "record", "stat", "trace", "sched", "mem", "c2c", "kmem", "lock", "kwork", "ftrace", "kvm":
		p := parseOpts(perfSpec, c.args, g.end+1)
		c.explain(&p)
		for _, o := range []string{"pre", "post"} {
			for _, v := range p.values(o) {
				c.code(v, "perf stat --"+o)
			}
		}
		if len(p.unknown) > 0 {
			u := c.args[p.unknown[0]]
			c.opaqueDetail(u.Span, "option "+u.Value+" of perf "+verb+" is not known: what it runs cannot be read")
			if len(p.operands) > 1 && c.w.probes < maxProbes {
				c.w.probes++
				c.run(p.operands[1:], "perf "+verb)
			}
		}
		if len(p.operands) > 0 && !p.has("h") {
			c.run(p.operands, "perf "+verb)
		}
	}
}

// tmuxCmd is how one tmux command reads its arguments (tmux parses each
// command's options with getopt, stopping at the first operand).
type tmuxCmd struct {
	spec *optSpec
	// kind: "shell" the operands are a shell command, "keys" typed into
	// a pane, "if" a shell command then tmux commands, "tmux" a tmux
	// command run later (bind-key, set-hook), "set" an option set.
	kind string
	// skip is how many operands come before what kind says (bind-key
	// KEY, set-hook HOOK).
	skip int
}

var tmuxCmds = map[string]tmuxCmd{
	"new-session":    {spec("+", "A", "c=", "d", "D", "e=", "E", "F=", "f=", "n=", "P", "s=", "t=", "x=", "X", "y="), "shell", 0},
	"new-window":     {spec("+", "a", "b", "c=", "d", "e=", "F=", "k", "n=", "P", "S", "t="), "shell", 0},
	"split-window":   {spec("+", "b", "c=", "d", "e=", "f", "F=", "h", "I", "l=", "p=", "P", "t=", "v", "Z"), "shell", 0},
	"respawn-pane":   {spec("+", "c=", "e=", "k", "t="), "shell", 0},
	"respawn-window": {spec("+", "c=", "e=", "k", "t="), "shell", 0},
	"run-shell":      {spec("+", "b", "C", "c=", "d=", "E", "t="), "shell", 0},
	"display-popup":  {spec("+", "B", "b=", "C", "c=", "d=", "e=", "E", "h=", "k", "s=", "S=", "t=", "T=", "w=", "x=", "y="), "shell", 0},
	"pipe-pane":      {spec("+", "I", "O", "o", "t="), "shell", 0},
	"send-keys":      {spec("+", "c=", "F", "H", "K", "l", "M", "N=", "R", "t=", "X"), "keys", 0},
	"if-shell":       {spec("+", "b", "F", "t="), "if", 0},
	"bind-key":       {spec("+", "n", "r", "N=", "T="), "tmux", 1},
	"set-hook":       {spec("+", "a", "g", "p", "R", "t=", "u", "w"), "tmux", 1},
	"confirm-before": {spec("+", "b", "c=", "p=", "t=", "y"), "tmux", 0},
	"command-prompt": {spec("+", "1", "b", "e", "F", "k", "i", "I=", "l", "N", "p=", "t=", "T="), "tmux", 0},
	"set-option":     {spec("+", "a", "F", "g", "o", "p", "q", "s", "t=", "u", "U", "w"), "set", 0},
}

// tmuxAliases are tmux's short names for commands.
var tmuxAliases = map[string]string{"new": "new-session", "neww": "new-window", "splitw": "split-window", "respawnp": "respawn-pane",
	"respawnw": "respawn-window", "run": "run-shell", "popup": "display-popup", "pipep": "pipe-pane", "send": "send-keys",
	"if": "if-shell", "bind": "bind-key", "confirm": "confirm-before", "set": "set-option", "setw": "set-option",
	"set-window-option": "set-option"}

// tmuxCommandNames are every tmux command name tmux may abbreviate (a
// unique prefix names a command: new-s, split).
var tmuxCommandNames = []string{"attach-session", "bind-key", "break-pane", "capture-pane", "choose-buffer", "choose-client",
	"choose-tree", "clear-history", "clear-prompt-history", "clock-mode", "command-prompt", "confirm-before", "copy-mode",
	"customize-mode", "delete-buffer", "detach-client", "display-menu", "display-message", "display-panes", "display-popup",
	"find-window", "has-session", "if-shell", "join-pane", "kill-pane", "kill-server", "kill-session", "kill-window", "last-pane",
	"last-window", "link-window", "list-buffers", "list-clients", "list-commands", "list-keys", "list-panes", "list-sessions",
	"list-windows", "load-buffer", "lock-client", "lock-server", "lock-session", "move-pane", "move-window", "new-session",
	"new-window", "next-layout", "next-window", "paste-buffer", "pipe-pane", "previous-layout", "previous-window", "refresh-client",
	"rename-session", "rename-window", "resize-pane", "resize-window", "respawn-pane", "respawn-window", "rotate-window", "run-shell",
	"save-buffer", "select-layout", "select-pane", "select-window", "send-keys", "send-prefix", "server-access", "set-buffer",
	"set-environment", "set-hook", "set-option", "set-window-option", "show-buffer", "show-environment", "show-hooks",
	"show-messages", "show-options", "show-prompt-history", "show-window-options", "source-file", "split-window", "start-server",
	"suspend-client", "swap-pane", "swap-window", "switch-client", "unbind-key", "unlink-window", "wait-for"}

// tmuxLookup finds a tmux command by name, alias or unique prefix.
func tmuxLookup(name string) (tmuxCmd, string, bool) {
	if full, ok := tmuxAliases[name]; ok {
		name = full
	}
	if tc, ok := tmuxCmds[name]; ok {
		return tc, name, true
	}
	found := ""
	for _, n := range tmuxCommandNames {
		if strings.HasPrefix(n, name) {
			if found != "" {
				return tmuxCmd{}, "", false // ambiguous: tmux refuses it
			}
			found = n
		}
	}
	tc, ok := tmuxCmds[found]
	return tc, found, ok
}

var tmuxGlobal = spec("+", "2", "c=", "C", "D", "d", "f=", "l", "L=", "N", "q", "S=", "T=", "u", "U", "v", "V")

// ruleTmux: -c CODE runs code; commands that take a shell command run it;
// send-keys types text into a pane's shell, which runs it; bind-key,
// set-hook and if-shell carry tmux commands of their own.
func ruleTmux(c *cmd) {
	p := c.parse(tmuxGlobal)
	for _, v := range p.values("c") {
		c.code(v, "tmux -c")
	}
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of tmux is not known: what it runs cannot be read")
	}
	c.tmuxCommands(p.operands, 0)
}

// tmuxCommands runs a list of tmux commands separated by ";" (written \;
// on a command line).
func (c *cmd) tmuxCommands(args []Arg, depth int) {
	for i := 0; i < len(args); {
		j := i
		for j < len(args) && args[j].Value != ";" && args[j].Value != `\;` {
			j++
		}
		c.tmuxCommand(args[i:j], depth)
		i = j + 1
	}
}

func (c *cmd) tmuxCommand(args []Arg, depth int) {
	if len(args) == 0 || depth > 4 {
		return
	}
	tc, name, ok := tmuxLookup(args[0].Value)
	if !ok {
		return
	}
	p := parseOpts(tc.spec, args, 1)
	if len(p.unknown) > 0 {
		u := args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of tmux "+name+" is not known")
	}
	ops := p.operands
	if len(ops) < tc.skip {
		return
	}
	ops = ops[tc.skip:]
	switch tc.kind {
	case "shell":
		if name == "run-shell" && p.has("C") {
			c.tmuxCommands(ops, depth+1)
			return
		}
		if len(ops) > 0 {
			c.codeText(ops, "tmux "+name)
		}
	case "keys":
		var text []Arg
		for _, o := range ops {
			if tmuxKey(o.Value) && !p.has("l") {
				continue
			}
			text = append(text, o)
		}
		if len(text) > 0 {
			c.codeText(text, "tmux send-keys")
		}
	case "if":
		if len(ops) == 0 {
			return
		}
		if !p.has("F") {
			c.code(ops[0], "tmux if-shell")
		}
		for _, o := range ops[1:] {
			c.tmuxText(o, depth)
		}
	case "tmux":
		if len(ops) == 1 {
			c.tmuxText(ops[0], depth)
			return
		}
		c.tmuxCommands(ops, depth+1)
	case "set":
		if len(ops) >= 2 {
			switch ops[0].Value {
			case "default-command", "default-shell", "lock-command", "copy-command", "editor":
				c.programOption(ops[1], "tmux set "+ops[0].Value)
			}
		}
	}
}

// tmuxText reads one word holding tmux commands ("run 'rm -rf ~'").
func (c *cmd) tmuxText(a Arg, depth int) {
	if !a.Static {
		c.dynamic(a)
		return
	}
	words, ok := splitString(a.Value)
	if !ok {
		c.dynamic(a)
		return
	}
	args := make([]Arg, len(words))
	for i, w := range words {
		args[i] = Arg{Value: w, Static: true, Span: a.Span}
	}
	c.tmuxCommands(args, depth+1)
}

// tmuxKey reports a key name send-keys sends as a key (Enter, C-m, …).
func tmuxKey(v string) bool {
	switch v {
	case "Enter", "Escape", "Tab", "Space", "BSpace", "Up", "Down", "Left", "Right", "Home", "End", "C-m", "C-j", "KPEnter":
		return true
	}
	return len(v) == 3 && (strings.HasPrefix(v, "C-") || strings.HasPrefix(v, "M-"))
}

var screenSpec = spec("+-", "a", "A", "c=", "d", "D", "e=", "f", "fn", "fa", "h=", "i", "l", "ln", "L", "Logfile=", "logfile=",
	"ls", "list", "m", "O", "p=", "q", "Q", "r", "R", "s=", "S=", "t=", "T=", "U", "v", "wipe", "x", "X", "4", "6", "help", "version")

// ruleScreen: screen [opts] CMD runs CMD in a new window (-d -m:
// detached); -X CMD… sends a screen command (stuff TEXT types text into a
// window's shell, exec and screen run programs); -r, -x, -ls, -wipe and
// -d without -m act on sessions and run nothing.
func ruleScreen(c *cmd) {
	p := c.parse(screenSpec)
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of screen is not known: what it runs cannot be read")
		if len(p.operands) > 1 && c.w.probes < maxProbes {
			c.w.probes++
			c.run(p.operands[1:], "screen")
		}
	}
	if p.has("X") {
		if len(p.operands) == 0 {
			return
		}
		x, rest := p.operands[0], p.operands[1:]
		switch x.Value {
		case "stuff":
			// screen turns \n and ^M into the Enter that runs the text.
			text := append([]Arg(nil), rest...)
			for i := range text {
				text[i].Value = strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n", "^J", "\n").Replace(text[i].Value)
				text[i].off = 0
			}
			if len(text) > 0 {
				c.codeText(text, "screen stuff")
			}
		case "exec", "screen":
			c.run(rest, "screen -X "+x.Value)
		}
		return
	}
	if p.has("r", "R", "x", "ls", "list", "wipe", "Q", "v", "help", "version") || p.has("d", "D") && !p.has("m") {
		return
	}
	c.run(p.operands, "screen")
}

// terminal is how a terminal emulator is told what to run.
type terminal struct {
	// rest are options after which the rest of argv is the command
	// (xterm -e PROG ARGS, gnome-terminal -- PROG ARGS); a single word
	// holding blanks is taken for a shell command line.
	rest []string
	// line are options whose value is a command line (gnome-terminal
	// -e 'CMD', --command=CMD).
	line []string
	// spec: the operands are the command (kitty PROG ARGS, foot PROG),
	// read after these options; chdir are its directory options.
	spec  *optSpec
	chdir []string
}

var (
	kittySpec = spec("+", "class=", "name=", "T|title=", "c|config=", "o|override=", "d|directory=", "detach", "session=", "w|watcher=",
		"hold", "1|single-instance", "instance-group=", "wait-for-single-instance-window-close", "listen-on=", "start-as=", "position=",
		"grab-keyboard", "os-window-tag=", "debug-rendering", "debug-input", "debug-keyboard", "debug-font-fallback", "debug-config",
		"dump-commands", "replay-commands=", "dump-bytes=", "detached-log=", "v|version", "h|help")
	footSpec = spec("+", "c|config=", "C|check-config", "o|override=", "f|font=", "t|term=", "T|title=", "a|app-id=",
		"toplevel-tag=", "w|window-size-pixels=", "W|window-size-chars=", "m|maximized", "F|fullscreen", "L|login-shell",
		"D|working-directory=", "s|server?", "H|hold", "p|print-pid=", "d|log-level=", "l|log-colorize?", "S|log-no-syslog",
		"e", "v|version", "h|help")
	weztermSpec = spec("+", "cwd=", "class=", "workspace=", "position=", "always-new-process", "new-tab", "domain=", "attach",
		"pane-id=", "domain-name=", "window-id=", "new-window", "h|help")
)

var terminals = map[string]terminal{
	"xterm": {rest: []string{"-e"}}, "uxterm": {rest: []string{"-e"}}, "urxvt": {rest: []string{"-e"}}, "rxvt": {rest: []string{"-e"}},
	"st": {rest: []string{"-e"}}, "x-terminal-emulator": {rest: []string{"-e"}}, "cool-retro-term": {rest: []string{"-e"}},
	"konsole":        {rest: []string{"-e"}},
	"alacritty":      {rest: []string{"-e", "--command"}},
	"gnome-terminal": {rest: []string{"--", "-x", "--execute"}, line: []string{"-e", "--command"}},
	"mate-terminal":  {rest: []string{"--", "-x", "--execute"}, line: []string{"-e", "--command"}},
	"xfce4-terminal": {rest: []string{"-x", "--execute"}, line: []string{"-e", "--command"}},
	"tilix":          {rest: []string{"-x", "--"}, line: []string{"-e", "--command"}},
	"terminator":     {rest: []string{"-x", "--execute"}, line: []string{"-e", "--command"}},
	"sakura":         {rest: []string{"-x", "--xterm-execute"}, line: []string{"-e", "--execute"}},
	"lxterminal":     {line: []string{"-e", "--command"}},
	"qterminal":      {line: []string{"-e", "--execute"}},
	"guake":          {line: []string{"-e", "--execute-command"}},
	"terminology":    {line: []string{"-e", "--exec"}},
	"kitty":          {spec: kittySpec, chdir: []string{"d"}},
	"foot":           {spec: footSpec, chdir: []string{"D"}},
	"wezterm":        {rest: []string{"-e"}, spec: weztermSpec, chdir: []string{"cwd"}},
}

// ruleTerminal: a terminal emulator runs the command its options name
// (or, for kitty, foot and wezterm start, its operands).
func ruleTerminal(c *cmd) {
	t := terminals[c.name]
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		v := a.Value
		if !a.Static {
			continue
		}
		if slicesHas(t.rest, v) {
			rest := c.args[i+1:]
			if len(rest) == 1 && strings.ContainsAny(rest[0].Value, " \t\n;|&") {
				c.code(rest[0], c.name+" "+v)
			} else if len(rest) > 0 {
				c.run(rest, c.name+" "+v)
			}
			return
		}
		for _, l := range t.line {
			switch {
			case v == l && i+1 < len(c.args):
				c.code(c.args[i+1], c.name+" "+l)
				return
			case strings.HasPrefix(l, "--") && strings.HasPrefix(v, l+"="):
				c.code(sub(a, len(l)+1), c.name+" "+l)
				return
			}
		}
	}
	if t.spec == nil {
		return
	}
	from := 1
	if c.name == "wezterm" {
		// wezterm [global options] start|cli spawn [options] [--] PROG…
		g := parseOpts(plainSpec, c.args, 1)
		switch {
		case len(g.operands) > 0 && g.operands[0].Value == "start":
			from = g.end + 1
		case len(g.operands) > 1 && g.operands[0].Value == "cli" && g.operands[1].Value == "spawn":
			from = g.end + 2
		default:
			return
		}
	}
	p := parseOpts(t.spec, c.args, from)
	c.explain(&p)
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of "+c.name+" is not known: what it runs cannot be read")
		if len(p.operands) > 1 && c.w.probes < maxProbes {
			c.w.probes++
			c.run(p.operands[1:], c.name)
		}
	}
	if len(p.operands) == 0 || p.has("v", "h", "C") {
		return
	}
	if d, ok := p.value(t.chdir...); ok {
		defer c.w.chdir(c.idx, d)()
	}
	c.run(p.operands, c.name)
}

// ruleSecretTool: keychain and secret-store commands that print a secret.
func ruleSecretTool(c *cmd) {
	ws := words(c.args[1:])
	has := func(vs ...string) bool { return hasAny(ws, vs...) }
	printing := false
	switch c.name {
	case "security":
		printing = has("find-generic-password", "find-internet-password", "dump-keychain", "export")
	case "secret-tool":
		printing = has("lookup", "search")
	case "pass", "gopass":
		printing = len(ws) > 0 && (ws[0] == "show" || ws[0] == "-c" || ws[0] == "--clip" || ws[0] == "otp" || !strings.HasPrefix(ws[0], "-") && !slicesHas([]string{"ls", "list", "find", "search", "init", "insert", "generate", "edit", "rm", "mv", "cp", "git", "help", "version", "grep"}, ws[0]))
	case "op":
		printing = has("read", "get", "inject") || len(ws) > 1 && ws[0] == "item" && ws[1] == "get"
	case "vault":
		printing = has("read", "get") || len(ws) > 1 && ws[0] == "kv" && ws[1] == "get" || has("print") && has("token")
	case "bw", "lpass":
		printing = has("get", "show", "export")
	case "keyring", "kwallet-query":
		printing = has("get", "-r", "--read-password")
	case "gpg", "gpg2":
		printing = has("--export-secret-keys", "--export-secret-subkeys", "-d", "--decrypt", "--export-ssh-key")
	case "age", "sops":
		printing = has("-d", "--decrypt", "decrypt", "exec-env", "exec-file")
	case "aws-vault":
		printing = has("exec", "export", "login")
	case "doppler", "chamber":
		printing = has("secrets", "export", "read", "run", "exec")
	}
	if printing {
		c.findDetail(clsSecretRead, c.span, c.name+" prints a secret")
	}
	if c.name == "vault" && len(ws) > 1 && (ws[0] == "kv" && (ws[1] == "delete" || ws[1] == "destroy" || ws[1] == "metadata" && has("delete")) ||
		ws[0] == "delete" || (ws[0] == "secrets" || ws[0] == "auth") && ws[1] == "disable") {
		c.findDetail(clsInfraDestroy, c.span, "vault "+strings.Join(ws[:2], " "))
	}
}

// ruleMake: -f FILE runs a makefile; --eval and SHELL= assignments change
// what recipes run. Makefile text the line itself holds (--eval TEXT,
// -E TEXT, -f - or -f /dev/stdin with a here-document) is read: its
// recipes and $(shell …) calls are shell commands, judged as such.
func ruleMake(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		v := a.Value
		switch {
		case v == "--eval" || v == "-E":
			c.findDetail(clsProgramOption, a.Span, "make "+v)
			if i+1 < len(c.args) {
				i++
				c.makeText(c.args[i], "make "+v)
			}
		case strings.HasPrefix(v, "--eval="):
			c.findDetail(clsProgramOption, a.Span, "make --eval")
			c.makeText(sub(a, len("--eval=")), "make --eval")
		case strings.HasPrefix(v, "-E") && len(v) > 2 && a.Static:
			c.findDetail(clsProgramOption, a.Span, "make -E")
			c.makeText(sub(a, 2), "make -E")
		case strings.HasPrefix(v, "SHELL=") || strings.HasPrefix(v, ".SHELLFLAGS="):
			c.programOption(sub(a, strings.IndexByte(v, '=')+1), "make SHELL=")
		case (v == "-f" || v == "--file" || v == "--makefile") && i+1 < len(c.args):
			i++
			c.makeFile(c.args[i])
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			c.makeFile(sub(a, strings.IndexByte(v, '=')+1))
		case strings.HasPrefix(v, "-f") && len(v) > 2:
			c.makeFile(sub(a, 2))
		}
	}
}

// closingOf returns the index in s of the shut byte that closes an
// already open one (depth 1), or -1.
func closingOf(s string, open, shut byte) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case shut:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func closeOf(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ')'
}

// makeFile judges make -f F when F is the command's input: a
// here-document is read as makefile text; a pipe cannot be seen into.
func (c *cmd) makeFile(f Arg) {
	if f.Value != "-" && f.Value != "/dev/stdin" && f.Value != "/dev/fd/0" && f.Value != "/proc/self/fd/0" {
		return
	}
	switch c.in.kind {
	case stdinText:
		c.makeText(Arg{Value: c.in.text, Static: c.in.static, Span: c.in.span}, "make -f -")
	default:
		c.findDetail(clsProgramOption, f.Span, "make reads its makefile from its input")
	}
}

// makeText judges makefile text: recipe lines (after a tab, or after
// "target: ;") and $(shell …) / ${shell …} calls. Make's own variables
// in them ($(CC)) read to the shell as substitutions it cannot see
// into, so such a recipe is never plainly safe.
func (c *cmd) makeText(a Arg, how string) {
	if !a.Static {
		c.dynamic(a)
		return
	}
	text := strings.ReplaceAll(a.Value, "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		recipe := ""
		switch {
		case strings.HasPrefix(line, "\t"):
			recipe = strings.TrimLeft(line[1:], "@-+ \t")
		default:
			if i := strings.IndexByte(line, ';'); i > 0 && strings.Contains(line[:i], ":") {
				recipe = strings.TrimLeft(line[i+1:], "@-+ \t")
			}
		}
		if recipe != "" {
			c.code(Arg{Value: recipe, Static: true, Span: a.Span}, how)
		}
		for _, open := range []string{"$(shell ", "${shell "} {
			rest := line
			for {
				i := strings.Index(rest, open)
				if i < 0 {
					break
				}
				rest = rest[i+len(open):]
				body := rest
				if end := closingOf(rest, open[1], closeOf(open[1])); end >= 0 {
					body = rest[:end]
				}
				c.code(Arg{Value: body, Static: true, Span: a.Span}, how+" $(shell)")
			}
		}
	}
}
