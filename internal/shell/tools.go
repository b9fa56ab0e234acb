package shell

import "strings"

// Family tools: programs that run other programs through an option (rg
// --pre, sort --compress-program, man -P, tcpdump -z), editors and pagers
// with command options (vim -c '!…', emacs --eval, less +!…), debuggers
// and profilers (gdb, perf), terminal multiplexers and terminal emulators
// (tmux, screen, xterm -e), and the programs that print secrets.

var _ = family(func() {
	register("tools", ruleRg, "rg")
	register("tools", func(c *cmd) { c.optionPrograms("--compress-program") }, "sort")
	register("tools", func(c *cmd) { c.optionPrograms("--pager"); c.recursiveReads(true) }, "ag")
	register("tools", ruleMan, "man")
	register("tools", func(c *cmd) { c.optionPrograms("-z") }, "tcpdump")
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

// optionPrograms flags the named program-bearing options and analyses
// their values as commands.
func (c *cmd) optionPrograms(names ...string) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		for _, n := range names {
			switch {
			case a.Value == n && i+1 < len(c.args):
				c.programOption(c.args[i+1], c.name+" "+n)
			case strings.HasPrefix(a.Value, n+"="):
				c.programOption(sub(a, len(n)+1), c.name+" "+n)
			case len(n) == 2 && strings.HasPrefix(a.Value, n) && len(a.Value) > 2 && !strings.HasPrefix(a.Value, "--"):
				c.programOption(sub(a, 2), c.name+" "+n)
			}
		}
	}
}

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
	c.optionPrograms("--pre", "--hostname-bin")
	c.recursiveReads(true)
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
		c.recursiveReads(false)
	}
}

// recursiveReads judges the operands of a recursive reader as trees
// (all of them for rg and ag, which search directories by default; the
// first is the pattern for grep).
func (c *cmd) recursiveReads(all bool) {
	var ops []Arg
	for _, a := range c.args[1:] {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) > 0 && (!all || c.name == "rg" || c.name == "ag") {
		ops = ops[1:] // the pattern
	}
	c.tree(ops, accRead)
}

// ruleMan: -P/--pager name a program; -H/--html open a browser.
func ruleMan(c *cmd) {
	c.optionPrograms("-P", "--pager")
	for _, a := range c.args[1:] {
		if strings.HasPrefix(a.Value, "-H") || strings.HasPrefix(a.Value, "--html") {
			c.find(clsProgramOption, a.Span)
			return
		}
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

// ruleVim: -c CMD, --cmd CMD and +CMD run ex commands; the files are
// edited (written); -S FILE sources a script we cannot see.
func ruleVim(c *cmd) {
	var files []Arg
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		v := a.Value
		switch {
		case (v == "-c" || v == "--cmd") && i+1 < len(c.args):
			i++
			c.exCommand(c.args[i], c.name+" -c")
		case strings.HasPrefix(v, "+") && len(v) > 1:
			c.exCommand(sub(a, 1), c.name+" +")
		case v == "-S" || v == "-u" || v == "-U" || v == "-i" || v == "-T" || v == "-w" || v == "-W" || v == "-s" || v == "-t" || v == "-q":
			i++
		case v == "-" || strings.HasPrefix(v, "-"):
		default:
			files = append(files, a)
		}
	}
	if c.name != "view" {
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

// ruleGdb: --args PROG ARGS names the program (it runs on -ex run, or
// later: it is judged as if it ran); -ex/-iex commands may run shell
// commands (shell, !) or Python.
func ruleGdb(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		switch v := a.Value; {
		case (v == "-ex" || v == "--ex" || v == "-iex" || v == "--eval-command" || v == "--init-eval-command" || v == "-o" || v == "--one-line") && i+1 < len(c.args):
			i++
			cmdText := strings.TrimSpace(c.args[i].Value)
			switch {
			case strings.HasPrefix(cmdText, "shell ") || strings.HasPrefix(cmdText, "!"):
				c.code(Arg{Value: strings.TrimPrefix(strings.TrimPrefix(cmdText, "shell "), "!"), Static: c.args[i].Static, Span: c.args[i].Span}, c.name+" shell")
			case strings.HasPrefix(cmdText, "python") || strings.HasPrefix(cmdText, "pipe") || strings.HasPrefix(cmdText, "|") || strings.HasPrefix(cmdText, "script"):
				c.inlineCode("gdb", c.args[i], c.name+" -ex")
			}
		case v == "--args" || v == "--":
			if i+1 < len(c.args) {
				c.run(c.args[i+1:], c.name+" --args")
			}
			return
		case (v == "-x" || v == "--command" || v == "-s" || v == "-p" || v == "--pid" || v == "-c" || v == "--core") && i+1 < len(c.args):
			i++
		}
	}
}

// rulePerf: perf record/stat/trace [opts] [--] CMD runs CMD.
func rulePerf(c *cmd) {
	if len(c.args) < 3 {
		return
	}
	switch c.args[1].Value {
	case "record", "stat", "trace", "sched", "mem", "c2c", "kmem", "lock", "kwork", "ftrace":
		c.runFrom(2, "perf "+c.args[1].Value, "e", "event", "o", "output", "p", "pid", "t", "tid", "c", "count", "F", "freq", "C", "cpu",
			"G", "cgroup", "m", "mmap-pages", "r", "repeat", "u", "uid", "D", "delay", "x", "field-separator", "I", "interval-print",
			"call-graph", "filter", "a", "all-cpus-value", "j", "branch-filter", "T", "duration", "input")
	}
}

// tmuxShellCommands are tmux commands whose trailing arguments are a
// shell command.
var tmuxShellCommands = map[string]bool{"new-session": true, "new": true, "new-window": true, "neww": true, "split-window": true,
	"splitw": true, "respawn-pane": true, "respawnp": true, "respawn-window": true, "respawnw": true, "run-shell": true, "run": true,
	"if-shell": true, "if": true, "display-popup": true, "popup": true, "pipe-pane": true, "pipep": true}

// tmuxValued are tmux options (of those commands) that take a value.
var tmuxValued = map[string]bool{"-c": true, "-e": true, "-F": true, "-n": true, "-s": true, "-t": true, "-x": true, "-y": true, "-l": true,
	"-S": true, "-L": true, "-f": true, "-T": true, "-w": true, "-h": true, "-b": true, "-d": false, "-N": true, "-X": false}

// ruleTmux: -c CODE runs code; commands that take a shell command run it;
// send-keys types text into a pane's shell, which runs it.
func ruleTmux(c *cmd) {
	i := 1
	for i < len(c.args) && strings.HasPrefix(c.args[i].Value, "-") {
		v := c.args[i].Value
		if v == "-c" && i+1 < len(c.args) {
			c.code(c.args[i+1], "tmux -c")
			i += 2
			continue
		}
		if v == "-f" || v == "-L" || v == "-S" || v == "-T" {
			i++
		}
		i++
	}
	for i < len(c.args) {
		// Commands are separated by ";" (written \; on a command line).
		j := i
		for j < len(c.args) && c.args[j].Value != ";" && c.args[j].Value != `\;` {
			j++
		}
		c.tmuxCommand(c.args[i:j])
		i = j + 1
	}
}

func (c *cmd) tmuxCommand(args []Arg) {
	if len(args) == 0 {
		return
	}
	name := args[0].Value
	rest := args[1:]
	var ops []Arg
	for k := 0; k < len(rest); k++ {
		v := rest[k].Value
		if strings.HasPrefix(v, "-") && len(v) > 1 && len(ops) == 0 {
			if tmuxValued[v[:2]] && len(v) == 2 {
				k++
			}
			continue
		}
		ops = append(ops, rest[k])
	}
	switch {
	case name == "send-keys" || name == "send" || name == "send-prefix":
		var text []Arg
		for _, o := range ops {
			if tmuxKey(o.Value) {
				continue
			}
			text = append(text, o)
		}
		if len(text) > 0 {
			c.codeText(text, "tmux send-keys")
		}
	case tmuxShellCommands[name]:
		if len(ops) > 0 {
			c.codeText(ops, "tmux "+name)
		}
	}
}

// tmuxKey reports a key name send-keys sends as a key (Enter, C-m, …).
func tmuxKey(v string) bool {
	switch v {
	case "Enter", "Escape", "Tab", "Space", "BSpace", "Up", "Down", "Left", "Right", "Home", "End", "C-m", "C-j", "KPEnter":
		return true
	}
	return len(v) == 3 && (strings.HasPrefix(v, "C-") || strings.HasPrefix(v, "M-"))
}

// ruleScreen: screen [opts] CMD runs CMD; -X stuff TEXT types text into
// a window's shell.
func ruleScreen(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case v == "-X":
			rest := c.args[i+1:]
			if len(rest) >= 2 && rest[0].Value == "stuff" {
				// screen turns \n and ^M into the Enter that runs the text.
				text := append([]Arg(nil), rest[1:]...)
				for i := range text {
					text[i].Value = strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n", "^J", "\n").Replace(text[i].Value)
					text[i].off = 0
				}
				c.codeText(text, "screen stuff")
			}
			if len(rest) >= 1 && (rest[0].Value == "exec" || rest[0].Value == "screen") {
				c.run(rest[1:], "screen -X "+rest[0].Value)
			}
			return
		case v == "-c" || v == "-e" || v == "-h" || v == "-p" || v == "-S" || v == "-s" || v == "-T" || v == "-t" || v == "-Logfile":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			c.run(c.args[i:], "screen")
			return
		}
	}
}

// ruleTerminal: a terminal emulator runs -e/-x/--command/-- CMD; a single
// word after -e is a command line for a shell.
func ruleTerminal(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case v == "--" || v == "-x" || v == "--execute" || v == "-e" && (c.name == "xterm" || c.name == "uxterm" || c.name == "konsole" || c.name == "alacritty" || c.name == "urxvt" || c.name == "rxvt" || c.name == "st" || c.name == "kitty"):
			if i+1 < len(c.args) {
				c.run(c.args[i+1:], c.name)
			}
			return
		case v == "-e" || v == "--command" || v == "-c":
			rest := c.args[i+1:]
			if len(rest) == 1 {
				c.code(rest[0], c.name+" -e")
			} else if len(rest) > 1 {
				c.run(rest, c.name)
			}
			return
		case strings.HasPrefix(v, "--command="):
			c.code(sub(c.args[i], len("--command=")), c.name+" --command")
			return
		case c.name == "wezterm" && v == "start":
		case c.name == "kitty" || c.name == "foot":
			if !strings.HasPrefix(v, "-") {
				c.run(c.args[i:], c.name)
				return
			}
		}
	}
}

// ruleSecretTool: keychain and secret-store commands that print a secret.
func ruleSecretTool(c *cmd) {
	ws := words(c.args[1:])
	has := func(vs ...string) bool {
		for _, w := range ws {
			for _, v := range vs {
				if w == v {
					return true
				}
			}
		}
		return false
	}
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
}

// ruleMake: -f FILE runs a makefile; --eval and SHELL= assignments change
// what recipes run.
func ruleMake(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case strings.HasPrefix(v, "--eval=") || v == "--eval":
			c.findDetail(clsProgramOption, c.args[i].Span, "make --eval")
		case strings.HasPrefix(v, "SHELL=") || strings.HasPrefix(v, ".SHELLFLAGS="):
			c.programOption(sub(c.args[i], strings.IndexByte(v, '=')+1), "make SHELL=")
		}
	}
}
