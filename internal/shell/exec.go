package shell

import (
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
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

// exec records a candidate and classifies it; launchers and carriers
// recurse into what they run. It returns the candidate's index.
func (w *walker) exec(args []Arg, via []string, assigns []string, in stdin, sp Span) int {
	if len(args) == 0 || w.err != nil {
		return -1
	}
	if len(w.a.Commands) >= w.opts.MaxCommands {
		w.err = fmt.Errorf("%w: more than %d commands", errCap, w.opts.MaxCommands)
		return -1
	}
	idx := len(w.a.Commands)
	w.a.Commands = append(w.a.Commands, Command{Argv: args, Via: via, Assigns: assigns, Span: sp})
	w.meta = append(w.meta, meta{})
	for _, as := range assigns {
		name, val, _ := strings.Cut(as, "=")
		w.assignFindings(idx, name, val, sp, via)
	}
	if !args[0].Static {
		w.a.Dynamic = true
		w.find(idx, clsDynamic, args[0].Span)
		w.remoteSubst(idx, args[0])
		return idx
	}
	// cmd values are recycled: rules never keep one past this call, and
	// a heap allocation per candidate was a fifth of the walk's garbage.
	c := w.newCmd()
	defer w.freeCmd(c)
	*c = cmd{w: w, idx: idx, name: cmdName(args[0].Value), args: args, via: via, in: in, span: sp}
	if c.name == "" {
		return idx
	}
	if fd, ok := w.funcs[c.name]; ok {
		if w.active[c.name] {
			return idx
		}
		if w.forkBomb(fd) {
			w.find(idx, clsForkBomb, sp)
		}
		// A body says the same thing at every call with the same kind of
		// stdin, so it is walked once per kind: a script calling log() a
		// thousand times stays linear.
		ek := expansion{fd, in.kind}
		if w.expanded[ek] {
			return idx
		}
		if w.active == nil {
			w.active = map[string]bool{}
			w.expanded = map[expansion]bool{}
		}
		w.expanded[ek] = true
		w.active[c.name] = true
		w.stmt(fd.Body, appendVia(via, "function "+c.name), in)
		delete(w.active, c.name)
		return idx
	}
	c.argProcMem()
	if r, ok := rules[c.name]; ok {
		r(c)
	} else if strings.HasPrefix(c.name, "mkfs.") {
		c.find(clsDiskFormat, sp)
	} else if strings.HasPrefix(c.name, "newfs") {
		ruleDevice(c)
	}
	return idx
}

// cmdName folds a command word to its lookup key: basename, lower case
// (case-insensitive file systems run RM as rm), without .exe.
func cmdName(word string) string {
	n := strings.ToLower(baseName(word))
	n = strings.TrimSuffix(n, ".exe")
	if strings.HasPrefix(n, "python") && strings.Trim(n[len("python"):], "0123456789.") == "" {
		return "python"
	}
	return n
}

func (c *cmd) find(class string, sp Span) { c.w.find(c.idx, class, sp) }

// run executes an inner argv reached through a launcher.
func (c *cmd) run(args []Arg, how string, assigns ...string) int {
	if len(args) == 0 {
		return -1
	}
	return c.w.exec(args, appendVia(c.via, how), assigns, c.in, c.span)
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

// remoteSubst flags code that comes from a network fetch inside a
// substitution: eval "$(curl …)", bash <(wget …).
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
}

// stdinCode handles a shell or interpreter that reads its program from
// standard input.
func (c *cmd) stdinCode(kind string) {
	switch c.in.kind {
	case stdinPipe:
		c.w.meta[c.idx].consumer = kind
	case stdinText:
		if kind != "shell" {
			c.find(clsInlineCode, c.span)
			return
		}
		if c.in.static {
			c.w.payload(c.in.text, appendVia(c.via, c.name+" <<"), c.in.span, -1, stdin{})
			return
		}
		c.w.a.Dynamic = true
		c.find(clsDynamic, c.in.span)
		c.w.dynamicPayload(c.in.text, appendVia(c.via, c.name+" <<"), c.in.span, stdin{})
	}
}

// opts describes a command's options for skipping them correctly.
type opts struct {
	short string   // short options that take a value
	long  []string // long options that take a value (when not --x=v)
}

func (o opts) longTakes(name string) bool {
	for _, l := range o.long {
		if l == name {
			return true
		}
	}
	return false
}

// parsed is an argv split into options and operands, GNU style: options
// may follow operands until "--".
type parsed struct {
	// flags are "-r", "--force", "-u" with their values ("" if none), in
	// order; a short list is cheaper than a map for the few a command has.
	flags    []flagValue
	operands []Arg
}

type flagValue struct{ name, value string }

// get returns the last value given for a flag.
func (p parsed) get(name string) (string, bool) {
	for i := len(p.flags) - 1; i >= 0; i-- {
		if p.flags[i].name == name {
			return p.flags[i].value, true
		}
	}
	return "", false
}

func (p *parsed) set(name, value string) {
	if p.flags == nil {
		p.flags = make([]flagValue, 0, 4) // one allocation for most commands
	}
	p.flags = append(p.flags, flagValue{name, value})
}

func (p parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.get(n); ok {
			return true
		}
	}
	return false
}

// parse splits args[1:] into flags and operands, letting options follow
// operands (GNU permutation) unless stopAtOperand.
func (c *cmd) parse(o opts, stopAtOperand bool) (parsed, int) {
	var p parsed
	i := 1
	for i < len(c.args) {
		a := c.args[i].Value
		switch {
		case a == "--":
			i++
			p.operands = append(p.operands, c.args[i:]...)
			return p, i
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, hasVal := strings.Cut(a, "=")
			if !hasVal && o.longTakes(name) && i+1 < len(c.args) {
				i++
				val = c.args[i].Value
			}
			p.set(name, val)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				f := shortFlags[a[j]]
				if strings.IndexByte(o.short, a[j]) >= 0 {
					val := a[j+1:]
					if val == "" && i+1 < len(c.args) {
						i++
						val = c.args[i].Value
					}
					p.set(f, val)
					break
				}
				p.set(f, "")
			}
		default:
			if stopAtOperand {
				return p, i
			}
			if p.operands == nil {
				// Room for every remaining word: one allocation, not a
				// growing slice.
				p.operands = make([]Arg, 0, len(c.args)-i)
			}
			p.operands = append(p.operands, c.args[i])
		}
		i++
	}
	return p, i
}

// shortFlags[c] is "-" + string(rune(c)), the name parse gives the short
// option c, built once rather than for every option of every command.
var shortFlags = func() (t [256]string) {
	for c := range t {
		t[c] = "-" + string(rune(c))
	}
	return t
}()

// launch skips a launcher's options and positional arguments and runs the
// rest as a command.
func (c *cmd) launch(o opts, positional int) {
	_, i := c.parse(o, true)
	i += positional
	if i < len(c.args) {
		c.run(c.args[i:], c.name)
	}
}

// rules maps a command name to its checks. Launchers and carriers recurse.
var rules map[string]func(*cmd)

func init() {
	rules = map[string]func(*cmd){
		"sudo": ruleSudo, "doas": ruleDoas, "su": ruleSu, "runuser": ruleRunuser,
		"env": ruleEnv, "command": ruleCommand, "builtin": func(c *cmd) { c.launch(opts{}, 0) },
		"exec":    func(c *cmd) { c.launch(opts{short: "a"}, 0) },
		"nohup":   func(c *cmd) { c.launch(opts{}, 0) },
		"setsid":  func(c *cmd) { c.launch(opts{}, 0) },
		"time":    func(c *cmd) { c.launch(opts{short: "fo"}, 0) },
		"nice":    func(c *cmd) { c.launch(opts{short: "n", long: []string{"--adjustment"}}, 0) },
		"ionice":  ruleQueryLaunch(opts{short: "cnP"}, 0),
		"chrt":    ruleQueryLaunch(opts{short: "T"}, 1),
		"taskset": ruleTaskset,
		"stdbuf":  func(c *cmd) { c.launch(opts{short: "ioe", long: []string{"--input", "--output", "--error"}}, 0) },
		"timeout": func(c *cmd) { c.launch(opts{short: "sk", long: []string{"--signal", "--kill-after"}}, 1) },
		"chroot":  func(c *cmd) { c.launch(opts{long: []string{"--userspec", "--groups"}}, 1) },
		"unshare": func(c *cmd) {
			c.launch(opts{short: "SGR", long: []string{"--setuid", "--setgid", "--root", "--wd"}}, 0)
		},
		"nsenter": func(c *cmd) {
			c.launch(opts{short: "tSGrw", long: []string{"--target", "--setuid", "--setgid", "--root", "--wd"}}, 0)
		},
		"pkexec": func(c *cmd) { c.launch(opts{long: []string{"--user"}}, 0) },
		"flock":  ruleFlock, "xargs": ruleXargs, "find": ruleFind, "watch": ruleWatch,
		"busybox": ruleBusybox, "toybox": ruleBusybox,
		"strace": ruleTrace, "ltrace": ruleTrace,
		"parallel": ruleParallel, "ssh": ruleSSH, "script": ruleScript,
		"eval":   func(c *cmd) { c.codeText(c.args[1:], "eval") },
		"source": ruleSource, ".": ruleSource,
		"alias": ruleAlias, "trap": ruleTrap,
		"awk": ruleAwk, "gawk": ruleAwk, "mawk": ruleAwk, "nawk": ruleAwk,
	}
	for _, s := range []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "fish", "csh", "tcsh"} {
		rules[s] = ruleShell
	}
	for n, flags := range interpreters {
		flags := flags
		rules[n] = func(c *cmd) { ruleInterp(c, flags) }
	}
	addCatalogRules()
}

func ruleSudo(c *cmd) {
	o := opts{short: "ugpChDrtUTR", long: []string{"--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--chroot", "--host"}}
	p, i := c.parse(o, true)
	if p.has("-s", "-i", "-S", "-A", "--shell", "--login", "--stdin", "--askpass") {
		c.find(clsSudoFlags, c.span)
	}
	if p.has("-l", "-v", "-k", "-K", "-V", "-e", "--list", "--validate", "--edit", "--version", "--help", "-h") && !p.has("-u") {
		if p.has("-e", "--edit") {
			c.writes(c.args[i:])
		}
		return
	}
	var assigns []string
	for i < len(c.args) && isAssign(c.args[i].Value) {
		assigns = append(assigns, c.args[i].Value)
		i++
	}
	if i < len(c.args) {
		c.run(c.args[i:], "sudo", assigns...)
	}
}

func ruleDoas(c *cmd) {
	p, i := c.parse(opts{short: "uC"}, true)
	if p.has("-s") {
		c.find(clsSudoFlags, c.span)
	}
	if i < len(c.args) {
		c.run(c.args[i:], "doas")
	}
}

func ruleSu(c *cmd) {
	p, _ := c.parse(opts{short: "csgGw", long: []string{"--command", "--shell", "--group", "--supp-group", "--whitelist-environment", "--session-command"}}, false)
	for _, f := range []string{"-c", "--command", "--session-command"} {
		if v, ok := p.get(f); ok {
			c.codeFlag(f, v, "su -c")
			return
		}
	}
	c.find(clsSudoFlags, c.span) // an interactive shell as another user
}

func ruleRunuser(c *cmd) {
	p, i := c.parse(opts{short: "cugGsw", long: []string{"--command", "--user", "--group", "--supp-group", "--shell", "--session-command", "--whitelist-environment"}}, true)
	if !p.has("-u", "--user", "-c", "--command", "--session-command") {
		p, _ = c.parse(opts{short: "cugGsw", long: []string{"--command", "--user", "--group", "--supp-group", "--shell", "--session-command", "--whitelist-environment"}}, false)
	}
	for _, f := range []string{"-c", "--command", "--session-command"} {
		if v, ok := p.get(f); ok {
			c.codeFlag(f, v, "runuser -c")
			return
		}
	}
	if p.has("-u", "--user") {
		if i < len(c.args) {
			c.run(c.args[i:], "runuser")
		}
		return
	}
	c.find(clsSudoFlags, c.span)
}

// codeFlag parses the value of an option that carries shell code. The
// value is found again among the args to keep its span and staticness.
func (c *cmd) codeFlag(flag, val, how string) {
	for j, a := range c.args {
		if a.Value == val && j > 0 {
			c.code(a, how)
			return
		}
		if strings.HasPrefix(a.Value, flag+"=") || (len(flag) == 2 && strings.HasPrefix(a.Value, flag) && len(a.Value) > 2 && a.Value[2:] == val) {
			inner := a
			inner.Value, inner.off = val, 0
			c.code(inner, how)
			return
		}
	}
	c.code(Arg{Value: val, Static: true, Span: c.span}, how)
}

func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && validName(name)
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func ruleEnv(c *cmd) {
	args := c.args
	var assigns []string
	i := 1
	for i < len(args) {
		a := args[i].Value
		switch {
		case a == "--":
			i++
		case a == "-S" || a == "--split-string" || strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "--split-string="):
			val := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
			src := args[i]
			if val == "" || a == "--split-string" {
				if i+1 >= len(args) {
					return
				}
				i++
				src = args[i]
				val = src.Value
			}
			words, ok := splitString(val)
			if !ok || !src.Static {
				c.dynamic(src)
			}
			inner := make([]Arg, 0, len(words)+len(args)-i)
			for _, w := range words {
				inner = append(inner, Arg{Value: w, Static: ok && src.Static, Span: src.Span})
			}
			args = append(inner, args[i+1:]...)
			i = 0
			continue
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i += 2
			continue
		case strings.HasPrefix(a, "-") && len(a) > 1:
		case isAssign(a):
			assigns = append(assigns, a)
		default:
			c.run(args[i:], "env", assigns...)
			return
		}
		if a == "--" {
			if i < len(args) {
				c.run(args[i:], "env", assigns...)
			}
			return
		}
		i++
	}
	for _, as := range assigns {
		name, val, _ := strings.Cut(as, "=")
		c.w.assignFindings(c.idx, name, val, c.span, c.via)
	}
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

func ruleCommand(c *cmd) {
	p, i := c.parse(opts{}, true)
	if p.has("-v", "-V") {
		return // a lookup, not an execution
	}
	if i < len(c.args) {
		c.run(c.args[i:], "command")
	}
}

// ruleQueryLaunch is for launchers whose -p form acts on a running pid.
func ruleQueryLaunch(o opts, positional int) func(*cmd) {
	return func(c *cmd) {
		p, _ := c.parse(o, true)
		if p.has("-p", "--pid") {
			return
		}
		c.launch(o, positional)
	}
}

func ruleTaskset(c *cmd) {
	p, i := c.parse(opts{}, true)
	if p.has("-p", "--pid") {
		return
	}
	if i+1 < len(c.args) {
		c.run(c.args[i+1:], "taskset")
	}
}

func ruleFlock(c *cmd) {
	o := opts{short: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}}
	p, i := c.parse(o, true)
	if v, ok := p.get("-c"); ok {
		c.codeFlag("-c", v, "flock -c")
		return
	}
	if v, ok := p.get("--command"); ok {
		c.codeFlag("--command", v, "flock -c")
		return
	}
	// flock FILE -c CMD puts the option after the file.
	if i+2 < len(c.args) && (c.args[i+1].Value == "-c" || c.args[i+1].Value == "--command") {
		c.code(c.args[i+2], "flock -c")
		return
	}
	if i+1 < len(c.args) {
		c.run(c.args[i+1:], "flock")
	}
}

func ruleXargs(c *cmd) {
	o := opts{short: "adEILnPs", long: []string{"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}
	_, i := c.parse(o, true)
	if i >= len(c.args) {
		return // xargs runs echo
	}
	inner := c.run(c.args[i:], "xargs")
	if inner >= 0 && c.w.a.Commands[inner].key() == "rm" {
		c.w.find(inner, clsDeleteXargs, c.span)
	}
}

func ruleWatch(c *cmd) {
	o := opts{short: "nqd", long: []string{"--interval", "--differences"}}
	p, i := c.parse(o, true)
	if i >= len(c.args) {
		return
	}
	if p.has("-x", "--exec") {
		c.run(c.args[i:], "watch")
		return
	}
	c.codeText(c.args[i:], "watch")
}

func ruleBusybox(c *cmd) {
	if len(c.args) > 1 && !strings.HasPrefix(c.args[1].Value, "-") {
		c.run(c.args[1:], c.name)
	}
}

func ruleTrace(c *cmd) {
	o := opts{short: "eopsuEIabOSPXn", long: []string{"--output", "--trace", "--signal", "--attach", "--user", "--env", "--string-limit"}}
	p, i := c.parse(o, true)
	if p.has("-p", "--attach") && i >= len(c.args) {
		return
	}
	if i < len(c.args) {
		c.run(c.args[i:], c.name)
	}
}

func ruleParallel(c *cmd) {
	o := opts{short: "jSadIInNLX", long: []string{"--jobs", "--sshlogin", "--arg-file", "--delimiter", "--colsep", "--timeout", "--joblog", "--results", "--delay", "--halt", "--max-args", "--workdir", "--tmpdir"}}
	_, i := c.parse(o, true)
	end := i
	for end < len(c.args) && !strings.HasPrefix(c.args[end].Value, ":::") {
		end++
	}
	if end > i {
		c.codeText(c.args[i:end], "parallel")
		return
	}
	if c.in.kind == stdinPipe || c.in.kind == stdinText {
		c.w.meta[c.idx].consumer = "shell" // each input line is a command
		if c.in.kind == stdinText {
			c.stdinCode("shell")
		}
	}
}

func ruleSSH(c *cmd) {
	o := opts{short: "bcDEeFIiJLlmOopQRSWw"}
	_, i := c.parse(o, true)
	for j := 1; j < i && j < len(c.args); j++ {
		switch v := c.args[j].Value; {
		case v == "-o" && j+1 < len(c.args):
			c.sshOption(c.args[j+1].Value)
		case strings.HasPrefix(v, "-o") && len(v) > 2:
			c.sshOption(v[2:])
		}
	}
	if i+1 < len(c.args) {
		c.codeText(c.args[i+1:], "ssh")
	}
}

func (c *cmd) sshOption(v string) {
	key, val, ok := strings.Cut(v, "=")
	if !ok {
		key, val, _ = strings.Cut(v, " ")
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "proxycommand", "localcommand", "knownhostscommand":
		c.programOption(Arg{Value: val, Static: true, Span: c.span}, "ssh -o "+key)
	}
}

func ruleScript(c *cmd) {
	p, _ := c.parse(opts{short: "cEIOBTm", long: []string{"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}}, false)
	for _, f := range []string{"-c", "--command"} {
		if v, ok := p.get(f); ok {
			c.codeFlag(f, v, "script -c")
		}
	}
}

func ruleSource(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	f := c.args[1]
	switch {
	case strings.HasPrefix(f.Value, "<(") || strings.Contains(f.Value, "$("):
		c.dynamic(f)
	case f.Value == "/dev/stdin" || f.Value == "-":
		c.stdinCode("shell")
	}
}

func ruleAlias(c *cmd) {
	for _, a := range c.args[1:] {
		name, val, ok := strings.Cut(a.Value, "=")
		if !ok || val == "" {
			continue
		}
		inner := a
		inner.Value, inner.off = val, 0
		c.code(inner, "alias "+name)
	}
}

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
		if a == "--rcfile" || a == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--") {
			continue
		}
		if (a[0] != '-' && a[0] != '+') || len(a) == 1 {
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
	switch {
	case hasC:
		if i < len(c.args) {
			c.code(c.args[i], c.name+" -c")
		}
	case readStdin || i >= len(c.args):
		c.stdinCode("shell")
	default:
		script := c.args[i]
		switch {
		case !script.Static || strings.HasPrefix(script.Value, "<("):
			c.dynamic(script)
		case script.Value == "/dev/stdin":
			c.stdinCode("shell")
		}
	}
}

// interpreter describes the inline-code flags of a language runtime.
type interpreter struct {
	inline []string // flags whose value is code: -c, -e, --eval
	bundle string   // letters that end a bundle with code: "c" for -Bc
}

var interpreters = map[string]interpreter{
	"python":     {inline: []string{"-c"}, bundle: "c"},
	"pypy":       {inline: []string{"-c"}, bundle: "c"},
	"pypy3":      {inline: []string{"-c"}, bundle: "c"},
	"perl":       {inline: []string{"-e", "-E"}, bundle: "eE"},
	"node":       {inline: []string{"-e", "--eval", "-p", "--print"}, bundle: "ep"},
	"nodejs":     {inline: []string{"-e", "--eval", "-p", "--print"}, bundle: "ep"},
	"bun":        {inline: []string{"-e", "--eval", "-p", "--print"}},
	"ruby":       {inline: []string{"-e"}, bundle: "e"},
	"php":        {inline: []string{"-r"}, bundle: "r"},
	"lua":        {inline: []string{"-e"}, bundle: "e"},
	"luajit":     {inline: []string{"-e"}, bundle: "e"},
	"rscript":    {inline: []string{"-e"}},
	"osascript":  {inline: []string{"-e"}},
	"tclsh":      {},
	"deno":       {},
	"pwsh":       {inline: []string{"-c", "-command", "--command"}},
	"powershell": {inline: []string{"-c", "-command"}},
}

// ruleInterp flags inline code and code read from stdin.
func ruleInterp(c *cmd, in interpreter) {
	if c.name == "deno" {
		if len(c.args) > 1 && c.args[1].Value == "eval" {
			c.find(clsInlineCode, c.span)
		}
		return
	}
	if c.name == "pwsh" || c.name == "powershell" {
		rulePowershell(c)
		return
	}
	for i := 1; i < len(c.args); i++ {
		a := c.args[i].Value
		if a == "-" {
			c.stdinCode("interp")
			return
		}
		if !strings.HasPrefix(a, "-") {
			return // a script file or module: runs a file we cannot see
		}
		if a == "-m" && i+1 < len(c.args) && (c.args[i+1].Value == "pip" || c.args[i+1].Value == "pip3") {
			pip := &cmd{w: c.w, idx: c.idx, name: "pip", args: c.args[i+1:], via: c.via, in: c.in, span: c.span}
			rulePkg(pip)
			return
		}
		if a == "-m" || a == "-r" && c.name != "php" {
			return
		}
		for _, f := range in.inline {
			if a == f || strings.HasPrefix(a, f+"=") {
				c.find(clsInlineCode, c.args[i].Span.join(c.lastSpan()))
				c.inPlaceEdits()
				return
			}
		}
		if in.bundle != "" && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], in.bundle) {
			c.find(clsInlineCode, c.args[i].Span.join(c.lastSpan()))
			c.inPlaceEdits()
			return
		}
	}
	c.stdinCode("interp")
}

func (c *cmd) lastSpan() Span { return c.args[len(c.args)-1].Span }

var awkExec = regexp.MustCompile(`system\s*\(|\|\s*"|"\s*\|\s*getline|\|&`)

func ruleAwk(c *cmd) {
	p, i := c.parse(opts{short: "vFf", long: []string{"--assign", "--field-separator", "--file"}}, true)
	if p.has("-f", "--file") || i >= len(c.args) {
		return
	}
	if awkExec.MatchString(c.args[i].Value) {
		c.find(clsInlineCode, c.args[i].Span)
	}
}

// staticOutput records what echo/printf print when it is fully known, so
// a shell fed by it can be analysed.
func (c *cmd) staticOutput() {
	for _, a := range c.args {
		if !a.Static {
			return
		}
	}
	var out string
	switch c.name {
	case "echo":
		words := c.args[1:]
		for len(words) > 0 && (words[0].Value == "-n" || words[0].Value == "-e" || words[0].Value == "-E") {
			words = words[1:]
		}
		vals := make([]string, len(words))
		for i, a := range words {
			vals[i] = a.Value
		}
		out = strings.Join(vals, " ") + "\n"
	case "printf":
		if len(c.args) < 2 {
			return
		}
		vals := make([]string, 0, len(c.args)-2)
		for _, a := range c.args[2:] {
			vals = append(vals, a.Value)
		}
		// A nil config would make expand use (and write to) one shared
		// package-level config, output buffer included: concurrent
		// analyses raced on it. Each call gets its own.
		s, _, err := expand.Format(&expand.Config{}, c.args[1].Value, vals)
		if err != nil {
			return
		}
		out = s
	default:
		return
	}
	c.w.meta[c.idx].output, c.w.meta[c.idx].hasOut = out, true
}

// inPlaceEdits judges the files perl or ruby edit with -i: the operands
// after the code.
func (c *cmd) inPlaceEdits() {
	if c.name != "perl" && c.name != "ruby" {
		return
	}
	inPlace := false
	var files []Arg
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case v == "-e" || v == "-E":
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if strings.ContainsRune(v[1:], 'i') {
				inPlace = true
			}
			if strings.ContainsAny(v[1:], "eE") && !strings.HasSuffix(v, "e") && !strings.HasSuffix(v, "E") {
				continue // -e with its code attached
			}
			if strings.HasSuffix(v, "e") || strings.HasSuffix(v, "E") {
				i++ // the code is the next word
			}
		default:
			files = append(files, c.args[i])
		}
	}
	if inPlace {
		c.writes(files)
	}
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
