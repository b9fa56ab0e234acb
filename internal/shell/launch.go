package shell

import "strings"

// Launchers: programs that run another program given as their operands
// (sudo CMD…, timeout 5 CMD…) or as an option's value (su -c CODE). Each
// is data: its options (one getopt model, getopt.go), how many operands
// come before the command, which options carry shell code, which make it
// run nothing, whether it changes user. One rule reads them all, so an
// option a launcher does not know never makes the rest of the line look
// like data: it makes it dynamic.

// launcher describes one launcher.
type launcher struct {
	spec *optSpec
	// positional is how many operands come before the command (timeout
	// DURATION, chroot NEWROOT, taskset MASK, flock FILE).
	positional int
	// code are options whose value is shell code (su -c, flock -c).
	code []string
	// inspect are options with which nothing is run (sudo -l, taskset
	// -p, ionice -p): a query or an action on a running process.
	inspect []string
	// shells are options that start a shell (sudo -s, sudo -i).
	shells []string
	// user is set when the command runs as another user (root).
	user bool
	// bare is what runs without a command: "" nothing, "shell" an
	// interactive shell (as the target user when user is set).
	bare string
	// assigns: NAME=VALUE operands before the command set its
	// environment (sudo, env).
	assigns bool
	// joined: the operands are joined with spaces and run by a shell
	// (watch, sg, ssh), not exec'd as an argv.
	joined bool
	// after: the command follows "--" only (kubectl exec, distrobox);
	// without "--" the operands are the launcher's own.
	after bool
	// posFirst: the positional operands come before the options
	// (setarch ARCH [options] PROGRAM).
	posFirst bool
	// doc is a short note for the docs.
	doc string
}

// launchers is the catalogue of launchers, by program name.
var launchers = map[string]*launcher{
	"sudo": {
		spec: spec("+", "A|askpass", "b|background", "B|bell", "C|close-from=", "c|login-class=", "D|chdir=", "E", "preserve-env?",
			"e|edit", "g|group=", "H|set-home", "h|help", "host=", "i|login", "K|remove-timestamp", "k|reset-timestamp", "l|list",
			"N|no-update", "n|non-interactive", "P|preserve-groups", "p|prompt=", "R|chroot=", "r|role=", "S|stdin", "s|shell",
			"T|command-timeout=", "t|type=", "U|other-user=", "u|user=", "V|version", "v|validate", "a|auth-type="),
		inspect: []string{"l", "v", "K", "V", "h"},
		shells:  []string{"s", "i"},
		user:    true, assigns: true,
		doc: "runs its command as root or -u USER; -s/-i start a shell; -l/-v/-V run nothing",
	},
	"doas": {
		spec:    spec("+", "a=", "C=", "L", "n", "s", "u="),
		inspect: []string{"L", "C"}, shells: []string{"s"}, user: true,
		doc: "runs its command as root or -u USER; -s starts a shell",
	},
	"pkexec": {
		spec: spec("+!", "user=", "disable-internal-agent", "keep-cwd", "help", "version"),
		user: true, bare: "shell", inspect: []string{"help", "version"},
		doc: "runs its command as root; without one, a root shell",
	},
	"run0": {
		spec: spec("+", "u|user=", "g|group=", "D|chdir=", "setenv=", "nice=", "property=", "description=", "slice=", "slice-inherit",
			"unit=", "background=", "pty", "machine=", "no-ask-password", "via-shell", "h|help", "version"),
		user: true, bare: "shell", inspect: []string{"help", "version"},
		doc: "systemd's sudo: runs its command as root; without one, a root shell",
	},
	"timeout": {
		spec:       spec("+", "f|foreground", "k|kill-after=", "p|preserve-status", "s|signal=", "v|verbose", "help", "version"),
		positional: 1, inspect: []string{"help", "version"},
	},
	"nice": {
		spec:    spec("+#", "n|adjustment=", "help", "version"),
		inspect: []string{"help", "version"},
	},
	"ionice": {
		spec:    spec("+", "c|class=", "n|classdata=", "p|pid=", "P|pgid=", "t|ignore", "u|uid=", "h|help", "V|version"),
		inspect: []string{"p", "P", "u", "h", "V"},
	},
	"chrt": {
		spec: spec("+", "a|all-tasks", "b|batch", "d|deadline", "e|ext", "f|fifo", "i|idle", "m|max", "o|other", "p|pid", "r|rr",
			"R|reset-on-fork", "T|sched-runtime=", "P|sched-period=", "D|sched-deadline=", "v|verbose", "h|help", "V|version"),
		positional: 1, inspect: []string{"p", "m", "h", "V"},
	},
	"taskset": {
		spec:       spec("+", "a|all-tasks", "c|cpu-list", "p|pid", "h|help", "V|version"),
		positional: 1, inspect: []string{"p", "h", "V"},
	},
	"stdbuf": {spec: spec("+", "i|input=", "o|output=", "e|error=", "help", "version"), inspect: []string{"help", "version"}},
	"flock": {
		spec: spec("+", "s|shared", "x|e|exclusive", "u|unlock", "n|nb|nonblock", "w|wait|timeout=", "E|conflict-exit-code=",
			"o|close", "c|command=", "F|no-fork", "verbose", "h|help", "V|version"),
		positional: 1, code: []string{"c"}, inspect: []string{"h", "V"},
		doc: "flock FILE CMD… or flock FILE -c CODE",
	},
	"time": {
		spec:    spec("+", "a|append", "f|format=", "o|output=", "p|portability", "q|quiet", "v|verbose", "help", "V|version"),
		inspect: []string{"help", "V"},
	},
	"chroot": {
		spec:       spec("+", "userspec=", "groups=", "skip-chdir", "help", "version"),
		positional: 1, bare: "shell", inspect: []string{"help", "version"},
	},
	"unshare": {
		spec: spec("+", "m|mount?", "u|uts?", "i|ipc?", "n|net?", "p|pid?", "U|user?", "C|cgroup?", "T|time?", "f|fork", "kill-child?",
			"mount-proc?", "mount-binfmt?", "r|map-root-user", "c|map-current-user", "map-user=", "map-group=", "map-users=", "map-groups=",
			"map-auto", "propagation=", "setgroups=", "keep-caps", "R|root=", "w|wd=", "S|setuid=", "G|setgid=", "monotonic=",
			"boottime=", "l|load-interp=", "h|help", "V|version"),
		bare: "shell", inspect: []string{"h", "V"},
	},
	"nsenter": {
		spec: spec("+", "a|all", "t|target=", "m|mount?", "u|uts?", "i|ipc?", "n|net?", "p|pid?", "C|cgroup?", "U|user?", "T|time?",
			"S|setuid=", "G|setgid=", "preserve-credentials", "r|root?", "w|wd?", "W|wdns=", "e|env", "F|no-fork", "Z|follow-context",
			"c|join-cgroup", "keep-caps", "user-parent", "h|help", "V|version"),
		bare: "shell", user: true, inspect: []string{"h", "V"},
		doc: "enters another process's namespaces (usually as root); without a command, a shell there",
	},
	"setsid":  {spec: spec("+", "c|ctty", "f|fork", "w|wait", "h|help", "V|version"), inspect: []string{"h", "V"}},
	"nohup":   {spec: spec("+", "help", "version"), inspect: []string{"help", "version"}},
	"builtin": {spec: spec("+")},
	"exec":    {spec: spec("+!", "a=", "c", "l")},
	"command": {spec: spec("+!", "p", "v", "V"), inspect: []string{"v", "V"}},
	"strace": {
		spec: spec("+", "a|columns=", "b|detach-on=", "e=", "E|env=", "I=", "o|output=", "O=", "p|attach=", "P|trace-path=",
			"s|string-limit=", "S|summary-sort-by=", "u|user=", "U|summary-columns=", "X|const-print-style=", "A", "c|summary-only",
			"C|summary", "d", "D", "f|follow-forks", "F", "h|help", "i|instruction-pointer", "k|stack-trace?", "n|syscall-number",
			"q|quiet?", "r|relative-timestamps?", "t|absolute-timestamps?", "T|syscall-times?", "v|no-abbrev", "V|version",
			"w|summary-wall-clock", "x", "y|decode-fds?", "Y|decode-pids?", "z|successful-only", "Z|failed-only", "trace=",
			"signal=", "status=", "inject=", "fault=", "kill-on-exit", "seccomp-bpf", "output-separately", "daemonize?",
			"secontext?", "timestamps?", "tips?", "verbose=", "raw=", "read=", "write=", "quiet?", "silent?"),
		inspect: []string{"p", "h", "V"},
	},
	"ltrace": {
		spec: spec("+", "a|align=", "A=", "b|no-signals", "c", "C|demangle", "D|debug=", "e=", "f", "F|config=", "h|help", "i",
			"l|library=", "L", "n|indent=", "o|output=", "p=", "r", "s=", "S", "t", "T", "u=", "w|where=", "x=", "V|version"),
		inspect: []string{"p", "h", "V"},
	},
	"watch": {
		spec: spec("+", "b|beep", "c|color", "C|no-color", "d|differences?", "e|errexit", "g|chgexit", "q|equexit=", "n|interval=",
			"p|precise", "r|no-rerun", "t|no-title", "w|no-wrap", "x|exec", "s|shotsdir=", "h|help", "v|version"),
		joined: true, inspect: []string{"h", "v"},
		doc: "runs its operands joined with spaces through sh -c, or as an argv with -x",
	},
	"xargs": {
		spec: spec("+", "0|null", "a|arg-file=", "d|delimiter=", "E=", "e|eof?", "I=", "i|replace?", "L=", "l|max-lines?",
			"n|max-args=", "o|open-tty", "P|max-procs=", "p|interactive", "r|no-run-if-empty", "s|max-chars=", "t|verbose",
			"x|exit", "process-slot-var=", "show-limits", "help", "version"),
		inspect: []string{"help", "version", "show-limits"},
		doc:     "runs its command with words read from stdin added (echo without one)",
	},
	"setpriv": {
		spec: spec("+", "d|dump", "nnp|no-new-privs", "ambient-caps=", "inh-caps=", "bounding-set=", "keep-groups", "clear-groups",
			"init-groups", "groups=", "ruid=", "euid=", "rgid=", "egid=", "reuid=", "regid=", "securebits=", "pdeathsig=",
			"selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=", "reset-env", "h|help", "V|version"),
		inspect: []string{"d", "h", "V"}, user: true,
	},
	"prlimit": {
		spec: spec("+", "p|pid=", "o|output=", "noheadings", "raw", "verbose", "h|help", "V|version", "c|core?", "d|data?", "e|nice?",
			"f|fsize?", "i|sigpending?", "l|memlock?", "m|rss?", "n|nofile?", "q|msgqueue?", "r|rtprio?", "s|stack?", "t|cpu?",
			"u|nproc?", "v|as?", "x|locks?", "y|rttime?"),
		inspect: []string{"p", "h", "V"},
	},
	"numactl": {
		spec: spec("+", "a|all", "i|interleave=", "w|weighted-interleave=", "p|preferred=", "P|preferred-many=", "m|membind=",
			"b|balancing", "N|cpunodebind=", "C|physcpubind=", "l|localalloc", "H|hardware", "s|show", "S|shm=", "f|file=",
			"L|length=", "o|offset=", "M|mode=", "V|verify", "T|touch", "huge", "u|uid=", "g|gid=", "h|help"),
		inspect: []string{"H", "s", "h"},
	},
	"cgexec": {spec: spec("+", "g=", "sticky", "r=")},
	"chpst": {
		spec: spec("+", "u=", "U=", "b=", "e=", "/=", "C=", "n=", "l=", "L=", "m=", "d=", "o=", "p=", "f=", "c=", "r=", "t=", "v", "P", "0", "1", "2"),
		user: true,
	},
	"setarch": {
		spec: spec("+", "R|addr-no-randomize", "F|fdpic-funcptrs", "Z|mmap-page-zero", "L|addr-compat-layout",
			"X|read-implies-exec", "B|32bit", "I|short-inode", "S|whole-seconds", "T|sticky-timeouts", "3|3gb", "4gb",
			"uname-2.6", "v|verbose", "list", "h|help", "V|version"),
		positional: 1, posFirst: true, bare: "shell", inspect: []string{"list", "h", "V"},
	},
	"daemonize":   {spec: spec("+", "a", "c=", "e=", "E=", "o=", "p=", "l=", "u=", "v")},
	"dbus-launch": {spec: spec("+", "sh-syntax", "csh-syntax", "auto-syntax", "close-stderr", "exit-with-session", "exit-with-x11", "autolaunch=", "config-file=", "binary-syntax", "version", "help")},
	"entr": {
		spec: spec("+", "a", "c", "d", "n", "p", "r", "s", "z"),
		doc:  "runs its command when files change; with -s its operand is shell code",
	},
	"firejail":      {spec: spec("+L"), doc: "runs its command in a sandbox (the command is judged as if it ran outside)"},
	"valgrind":      {spec: spec("+L")},
	"fakeroot":      {spec: spec("+", "l|lib=", "faked=", "s=", "i=", "u|unknown-is-real", "b=", "h|help", "v|version"), bare: "shell"},
	"proot":         {spec: spec("+", "r|rootfs=", "b|bind|m|mount=", "w|pwd|cwd=", "k|kernel-release=", "0|root-id", "i|change-id=", "q|qemu=", "R=", "S=", "v|verbose=", "V|version", "h|help", "L|link2symlink", "kill-on-exit"), bare: "shell"},
	"flatpak-spawn": {spec: spec("+", "host", "watch-bus", "expose-pids", "share-pids", "env=", "unset-env=", "forward-fd=", "clear-env", "latest-version", "no-network", "sandbox", "sandbox-expose=", "sandbox-expose-ro=", "sandbox-flag=", "directory=", "app-path=", "usr-path=", "verbose", "h|help")},
	"bwrap": {
		spec: spec("+!", "args=", "argv0=", "unshare-all", "share-net", "unshare-user", "unshare-user-try", "unshare-ipc", "unshare-pid",
			"unshare-net", "unshare-uts", "unshare-cgroup", "unshare-cgroup-try", "userns=", "userns2=", "disable-userns",
			"assert-userns-disabled", "pidns=", "uid=", "gid=", "hostname=", "chdir=", "clearenv", "setenv==", "unsetenv=", "lock-file=",
			"sync-fd=", "bind==", "bind-try==", "dev-bind==", "dev-bind-try==", "ro-bind==", "ro-bind-try==", "remount-ro=",
			"overlay-src=", "overlay===", "tmp-overlay=", "ro-overlay=", "exec-label=", "file-label=", "proc=", "dev=", "tmpfs=",
			"mqueue=", "dir=", "file==", "bind-data==", "ro-bind-data==", "symlink==", "seccomp=", "add-seccomp-fd=", "block-fd=",
			"userns-block-fd=", "info-fd=", "json-status-fd=", "new-session", "die-with-parent", "as-pid-1", "cap-add=", "cap-drop=",
			"perms=", "size=", "chmod==", "level-prefix", "help", "version"),
	},
	"lxc-attach": {
		spec: spec("", "n|name=", "a|arch=", "e|elevated-privileges?", "s|namespaces=", "R|remount-sys-proc", "clear-env", "keep-env",
			"v|set-var=", "keep-var=", "u|uid=", "g|gid=", "P|lxcpath=", "o|logfile=", "l|logpriority=", "q|quiet", "f|rcfile=",
			"context=", "L|pty-log="),
		after: true, bare: "shell",
	},
	"distrobox-enter": {
		spec:  spec("", "n|name=", "e|exec", "T|no-tty", "nw|no-workdir", "a|additional-flags=", "r|root", "d|dry-run", "v|verbose", "h|help", "V|version"),
		after: true, bare: "shell",
	},
	"sg":  {spec: spec("+"), positional: 1, joined: true, doc: "sg GROUP [-c] CODE: runs its code through sh -c"},
	"ssh": {spec: spec("+", "4", "6", "A", "a", "C", "f", "G", "g", "K", "k", "M", "N", "n", "q", "s", "T", "t", "V", "v", "X", "x", "Y", "y", "B=", "b=", "c=", "D=", "E=", "e=", "F=", "I=", "i=", "J=", "L=", "l=", "m=", "O=", "o=", "P=", "p=", "Q=", "R=", "S=", "W=", "w="), positional: 1, joined: true, bare: "shell", doc: "ssh HOST CODE: the code runs on the remote host's shell"},
	"hyperfine": {
		spec: spec("", "w|warmup=", "m|min-runs=", "M|max-runs=", "r|runs=", "s|setup=", "p|prepare=", "c|cleanup=", "conclude=",
			"P|parameter-scan===", "D|parameter-step-size=", "L|parameter-list==", "S|shell=", "N", "i|ignore-failure", "style=",
			"sort=", "u|time-unit=", "export-asciidoc=", "export-csv=", "export-json=", "export-markdown=", "export-orgmode=",
			"show-output", "output=", "input=", "n|command-name=", "h|help", "V|version"),
		code: []string{"s", "p", "c", "conclude"}, doc: "each operand is shell code, as are --setup, --prepare and --cleanup",
	},
	"linux32": {spec: spec("+", "R|addr-no-randomize", "3|3gb", "B|32bit", "v|verbose"), bare: "shell"},
	"linux64": {spec: spec("+", "R|addr-no-randomize", "v|verbose"), bare: "shell"},
}

// privileged are the launchers that run their command as another user.
func privileged(via []string) bool {
	for _, v := range via {
		if l, ok := launchers[v]; ok && l.user {
			return true
		}
		switch v {
		case "su", "runuser", "su -c", "runuser -c":
			return true
		}
	}
	return false
}

// ruleLaunch is the rule of every launcher in the catalogue.
func ruleLaunch(c *cmd) {
	l := launchers[c.name]
	var p opts
	if l.posFirst {
		p = parseOpts(l.spec, c.args, 1+l.positional)
		c.explain(&p)
	} else {
		p = c.parse(l.spec)
	}
	if p.has(l.inspect...) {
		if c.name == "sudo" && p.has("e") {
			c.writes(p.operands) // sudoedit
		}
		return
	}
	if c.name == "sudo" && p.has("e") {
		c.writes(p.operands)
		return
	}
	for _, o := range l.code {
		for _, v := range p.values(o) {
			c.code(v, c.name+" -"+o)
		}
	}
	if p.has(l.shells...) {
		c.find(clsPrivShell, c.span)
	}
	if c.name == "sudo" && p.has("S", "A") {
		c.findDetail(clsPrivShell, c.span, "password read from stdin or an askpass program")
	}
	rest := p.operands
	if l.after {
		rest = nil
		if p.dashdash >= 0 {
			rest = c.args[p.dashdash+1:]
		}
	}
	if len(p.unknown) > 0 {
		// Which word is the command depends on whether the unknown option
		// takes a value: the line is dynamic, and both readings are walked.
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of "+c.name+" is not known: what it runs cannot be read")
		if len(rest) > l.positional+1 && c.w.probes < maxProbes {
			c.w.probes++
			c.launchRest(l, rest[1:], true)
		}
	}
	c.launchRest(l, rest, false)
}

// launchRest runs what a launcher runs from its operands.
func (c *cmd) launchRest(l *launcher, rest []Arg, alt bool) {
	if l.posFirst {
		l = &launcher{spec: l.spec, bare: l.bare, user: l.user} // the positional operands are read
	}
	if len(rest) < l.positional {
		return
	}
	if c.name == "flock" && len(rest) >= 3 && (rest[1].Value == "-c" || rest[1].Value == "--command") {
		c.code(rest[2], "flock -c")
		return
	}
	rest = rest[l.positional:]
	var assigns []string
	if l.assigns {
		for len(rest) > 0 && isAssign(rest[0].Value) {
			assigns = append(assigns, rest[0].Value)
			rest = rest[1:]
		}
	}
	if len(rest) == 0 {
		if alt {
			return
		}
		for _, as := range assigns {
			name, val, _ := strings.Cut(as, "=")
			c.w.assignFindings(c.idx, name, val, c.span, c.via)
		}
		switch {
		case c.name == "xargs":
		case l.bare == "shell" && (l.user || privileged(c.via)):
			c.find(clsPrivShell, c.span)
		case l.bare == "shell":
			c.stdinCode("shell")
		}
		return
	}
	switch {
	case c.name == "sg" && rest[0].Value == "-c":
		c.codeText(rest[1:], "sg -c")
	case c.name == "entr" && c.hasFlag("s"):
		c.codeText(rest, "entr -s")
	case c.name == "hyperfine":
		for _, r := range rest {
			c.code(r, "hyperfine")
		}
	case c.name == "watch" && c.hasFlag("x", "exec"):
		c.run(rest, c.name, assigns...)
	case l.joined:
		c.codeText(rest, c.name)
	default:
		inner := c.run(rest, c.name, assigns...)
		if c.name == "xargs" && inner >= 0 && c.w.a.Commands[inner].key() == "rm" {
			c.w.find(inner, clsDeleteXargs, c.span)
		}
	}
}

// hasFlag re-reads c's options for a flag (launchers whose behaviour
// turns on one).
func (c *cmd) hasFlag(names ...string) bool {
	l := launchers[c.name]
	p := parseOpts(l.spec, c.args, 1)
	return p.has(names...)
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
