package shell

import (
	"strings"
)

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
	// verb: the launcher runs something only through this subcommand
	// (machinectl shell, pueue add, vagrant ssh), whose options are
	// spec; global are the options before it.
	verb   string
	global *optSpec
	// exec are options whose value is the program to run, the operands
	// its arguments (start-stop-daemon --exec, capsh --launch).
	exec []string
	// prefix is the command the operands are handed to (capsh -- ARGS
	// runs bash ARGS); shellOpt is an option that replaces its program
	// (capsh --shell=PROG).
	prefix   string
	shellOpt string
	// chdir are options whose value is the directory the command starts
	// in (env -C, sudo -D): relative paths of the command resolve there.
	chdir []string
	// data: the operands are not a command (vagrant ssh NAME): only
	// code options run something.
	data bool
	// posUnless: there is no positional operand when one of these
	// options is given (runcon -t TYPE CMD, but runcon CONTEXT CMD).
	posUnless []string
	// needs: without one of these options nothing is run
	// (start-stop-daemon --start).
	needs []string
	// reexec is an operand that makes the launcher run itself again with
	// the words after it (capsh ==).
	reexec string
	// shArgs is an option after which the words are a shell's arguments
	// (ksu -a -c CODE).
	shArgs string
	// lead: an optional operand comes before the options (ksu [USER]
	// -e PROGRAM).
	lead bool
	// newRoot: the positional operand is the new root directory, where
	// the command starts (chroot DIR CMD: relative paths resolve there).
	newRoot bool
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
		user:    true, assigns: true, chdir: []string{"D"},
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
		user: true, bare: "shell", inspect: []string{"help", "version"}, chdir: []string{"D"},
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
		positional: 1, bare: "shell", inspect: []string{"help", "version"}, newRoot: true,
	},
	"unshare": {
		spec: spec("+", "m|mount?", "u|uts?", "i|ipc?", "n|net?", "p|pid?", "U|user?", "C|cgroup?", "T|time?", "f|fork", "kill-child?",
			"mount-proc?", "mount-binfmt?", "r|map-root-user", "c|map-current-user", "map-user=", "map-group=", "map-users=", "map-groups=",
			"map-auto", "propagation=", "setgroups=", "keep-caps", "R|root=", "w|wd=", "S|setuid=", "G|setgid=", "monotonic=",
			"boottime=", "l|load-interp=", "h|help", "V|version"),
		bare: "shell", inspect: []string{"h", "V"}, chdir: []string{"w"},
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
	"proot":         {spec: spec("+", "r|rootfs=", "b|bind|m|mount=", "w|pwd|cwd=", "k|kernel-release=", "0|root-id", "i|change-id=", "q|qemu=", "R=", "S=", "v|verbose=", "V|version", "h|help", "L|link2symlink", "kill-on-exit"), bare: "shell", chdir: []string{"w"}},
	"flatpak-spawn": {spec: spec("+", "host", "watch-bus", "expose-pids", "share-pids", "env=", "unset-env=", "forward-fd=", "clear-env", "latest-version", "no-network", "sandbox", "sandbox-expose=", "sandbox-expose-ro=", "sandbox-flag=", "directory=", "app-path=", "usr-path=", "verbose", "h|help"), chdir: []string{"directory"}},
	"bwrap": {
		spec: spec("+!", "args=", "argv0=", "unshare-all", "share-net", "unshare-user", "unshare-user-try", "unshare-ipc", "unshare-pid",
			"unshare-net", "unshare-uts", "unshare-cgroup", "unshare-cgroup-try", "userns=", "userns2=", "disable-userns",
			"assert-userns-disabled", "pidns=", "uid=", "gid=", "hostname=", "chdir=", "clearenv", "setenv==", "unsetenv=", "lock-file=",
			"sync-fd=", "bind==", "bind-try==", "dev-bind==", "dev-bind-try==", "ro-bind==", "ro-bind-try==", "remount-ro=",
			"overlay-src=", "overlay===", "tmp-overlay=", "ro-overlay=", "exec-label=", "file-label=", "proc=", "dev=", "tmpfs=",
			"mqueue=", "dir=", "file==", "bind-data==", "ro-bind-data==", "symlink==", "seccomp=", "add-seccomp-fd=", "block-fd=",
			"userns-block-fd=", "info-fd=", "json-status-fd=", "new-session", "die-with-parent", "as-pid-1", "cap-add=", "cap-drop=",
			"perms=", "size=", "chmod==", "level-prefix", "help", "version"),
		chdir: []string{"chdir"},
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
	"script": {
		// util-linux: script [options] [FILE] with -c CODE; BSD and macOS:
		// script [options] [FILE [COMMAND…]].
		spec: spec("+", "a|append", "c|command=", "E|echo=", "e|return", "f|flush", "force", "B|log-io=", "I|log-in=", "O|log-out=",
			"T|log-timing=", "m|logging-format=", "o|output-limit=", "q|quiet", "t|timing?", "F", "k", "r", "p", "h|help", "V|version"),
		positional: 1, code: []string{"c"}, bare: "shell", inspect: []string{"h", "V"},
		doc: "script -c CODE [FILE], or script FILE COMMAND… (BSD): records a shell or a command",
	},
	"start-stop-daemon": {
		spec: spec("", "S|start", "K|stop", "T|status", "H|help", "V|version", "pid=", "ppid=", "p|pidfile=", "x|exec=", "n|name=",
			"u|user=", "g|group=", "s|signal=", "R|retry=", "a|startas=", "t|test", "o|oknodo", "q|quiet", "c|chuid=", "r|chroot=",
			"d|chdir=", "b|background", "notify-await", "notify-timeout=", "C|no-close", "O|output=", "N|nicelevel=", "P|procsched=",
			"I|iosched=", "k|umask=", "m|make-pidfile", "remove-pidfile", "v|verbose"),
		exec: []string{"x", "a"}, needs: []string{"S"}, inspect: []string{"t", "H", "V"}, chdir: []string{"d"},
		doc: "start-stop-daemon --start runs --startas or --exec with the operands after --",
	},
	"capsh": {
		spec: spec("+", "print", "current", "caps?", "drop?", "addamb?", "delamb?", "noamb", "inh?", "keep?", "secbits?", "user?",
			"uid?", "gid?", "groups?", "chroot?", "shell?", "forkfor?", "killit?", "decode?", "supports?", "has-p?", "has-i?", "has-a?",
			"has-b?", "has-ambient", "iab?", "modes", "mode?", "license", "explain?", "quiet", "strict", "is-uid?", "is-gid?", "is-nouid?",
			"is-nogid?", "launch?", "ambient?", "h|help"),
		after: true, prefix: "bash", shellOpt: "shell", exec: []string{"launch"}, reexec: "==", inspect: []string{"h"},
		doc: "capsh … -- ARGS runs bash ARGS (or --shell's program); == runs capsh again",
	},
	"ksu": {
		spec: spec("+", "n=", "c=", "k", "r=", "p", "P", "f", "F", "l=", "z", "Z", "q", "e=!", "a=!"),
		exec: []string{"e"}, shArgs: "a", user: true, bare: "shell", lead: true,
		doc: "Kerberos su: ksu [USER] -e PROGRAM ARGS… runs it; -a ARGS… gives them to a shell",
	},
	"machinectl": {
		global: spec("+", "p|property=", "q|quiet", "E|setenv=", "uid=", "M|machine=", "H|host=", "no-pager", "no-legend",
			"no-ask-password", "l|full", "a|all", "value", "o|output=", "verify=", "force", "now", "kill-whom=", "s|signal=", "read-only",
			"mkdir", "max-addresses=", "format=", "runner=", "h|help", "version"),
		spec: spec("+", "p|property=", "q|quiet", "E|setenv=", "uid=", "M|machine=", "H|host=", "no-ask-password"),
		verb: "shell", positional: 1, user: true, bare: "shell",
		doc: "machinectl shell [USER@]MACHINE COMMAND… runs it in a machine (the host itself with .host)",
	},
	"systemd-nspawn": {
		spec: spec("+", "D|directory=", "template=", "x|ephemeral", "i|image=", "image-policy=", "oci-bundle=", "a|as-pid2", "b|boot",
			"chdir=", "pivot-root=", "u|user=", "M|machine=", "hostname=", "uuid=", "S|slice=", "property=", "register=", "keep-unit",
			"n|network-veth", "private-network", "network-interface=", "network-macvlan=", "network-ipvlan=", "network-bridge=",
			"network-zone=", "network-namespace-path=", "network-veth-extra=", "p|port=", "Z|selinux-context=", "L|selinux-apifs-context=",
			"capability=", "drop-capability=", "ambient-capability=", "no-new-privileges=", "system-call-filter=", "rlimit=",
			"oom-score-adjust=", "cpu-affinity=", "kill-signal=", "link-journal=", "j", "read-only", "bind=", "bind-ro=", "bind-user=",
			"inaccessible=", "tmpfs=", "overlay=", "overlay-ro=", "E|setenv=", "personality=", "q|quiet", "volatile?", "settings=",
			"notify-ready=", "suppress-sync=", "console=", "P|pipe", "private-users?", "private-users-ownership=", "U", "resolv-conf=",
			"timezone=", "background=", "load-credential=", "set-credential=", "h|help", "version"),
		bare: "shell", inspect: []string{"h", "version"},
	},
	"dbus-run-session": {spec: spec("+", "config-file=", "dbus-daemon=", "help", "version"), inspect: []string{"help", "version"}},
	"xvfb-run": {
		spec:    spec("+", "a|auto-servernum", "d|auto-display", "e|error-file=", "f|auth-file=", "h|help", "n|server-num=", "l|listen-tcp", "p|xauth-protocol=", "s|server-args=", "w|wait="),
		inspect: []string{"h"},
	},
	"eatmydata":    {spec: spec("+", "h|help", "v|version"), inspect: []string{"h", "v"}},
	"fakechroot":   {spec: spec("+", "l|lib=", "d|elfloader=", "s|use-system-libs", "e|environment=", "c|config-dir=", "b|bindir=", "h|help", "v|version"), bare: "shell", inspect: []string{"h", "v"}},
	"proxychains":  {spec: spec("+", "q", "f=")},
	"proxychains4": {spec: spec("+", "q", "f=")},
	"torsocks": {
		spec:    spec("+", "u|user=", "p|pass=", "a|address=", "P|port=", "i|isolate", "d|debug", "shell", "version", "h|help"),
		inspect: []string{"version", "h"},
	},
	"torify":   {spec: spec("+", "h|help", "v|version")},
	"trickle":  {spec: spec("+", "d=", "u=", "w=", "t=", "l=", "n=", "s", "v", "V", "h"), inspect: []string{"V", "h"}},
	"faketime": {spec: spec("+", "m", "f", "p=", "exclude-monotonic", "date-prog=", "h|help", "v|version"), positional: 1, inspect: []string{"h", "v"}},
	"unbuffer": {spec: spec("+", "p")},
	"rlwrap": {
		spec: spec("+", "a|always-readline?", "A|ansi-colour-aware", "b|break-chars=", "c|complete-filenames", "C|command-name=", "D|history-no-dupes=",
			"e|extra-char-after-completion=", "E|always-echo", "f|file=", "F|history-format=", "g|forget-matching=", "h|help", "H|history-filename=",
			"i|case-insensitive", "I|pass-sigint-as-sigterm", "l|logfile=", "m|multi-line?", "M|multi-line-ext=", "n|no-warnings",
			"N|no-children", "o|one-shot", "O|only-cook=", "p|prompt-colour?", "P|pre-given=", "q|quote-characters=", "r|remember",
			"R|renice", "s|histsize=", "S|substitute-prompt=", "t|set-term-name=", "U|mirror-arguments", "v|version", "w|wait-before-prompt=",
			"W|polling", "X|skip-setctty", "z|filter="),
		inspect: []string{"h", "v"},
	},
	"chronic":   {spec: spec("+", "e", "v")},
	"nocache":   {spec: spec("+", "n=")},
	"catchsegv": {spec: spec("+")},
	"cpulimit": {
		spec: spec("+", "l|limit=", "p|pid=", "e|exe=", "P|path=", "z|lazy", "i|include-children", "b|background", "c|cpu=", "q|quiet",
			"k|kill", "r|restore", "s|signal=", "m|monitor-forks", "v|verbose", "h|help"),
		inspect: []string{"p", "e", "P", "h"},
	},
	"nq":  {spec: spec("+", "c", "q", "t", "w"), inspect: []string{"t", "w"}},
	"tsp": {spec: spec("+", "n", "g", "f", "m", "L=", "d", "D=", "W=", "E", "N=", "B", "K", "C", "l", "S", "t", "c", "p", "o", "i", "u", "s", "r", "w", "k", "T", "V", "h"), inspect: []string{"K", "C", "l", "S", "t", "c", "p", "o", "i", "u", "s", "r", "w", "k", "T", "V", "h"}},
	"pueue": {
		global: spec("+", "c|config=", "p|profile=", "v|verbose", "color=", "h|help", "V|version"),
		spec: spec("+", "w|working-directory=", "e|escape", "i|immediate", "f|follow", "s|stashed", "d|delay=", "g|group=", "a|after=",
			"o|priority=", "l|label=", "p|print-task-id", "h|help"),
		verb: "add", joined: true, chdir: []string{"w"}, inspect: []string{"h"},
		doc: "pueue add COMMAND… queues a shell command",
	},
	"aa-exec": {spec: spec("+", "p|profile=", "n|namespace=", "i|immediate", "v|verbose", "d|debug", "h|help"), inspect: []string{"h"}},
	"runcon": {
		spec:       spec("+", "c|compute", "u|user=", "r|role=", "t|type=", "l|range=", "help", "version"),
		positional: 1, posUnless: []string{"u", "r", "t", "l"}, inspect: []string{"help", "version"},
	},
	"sandbox-exec": {spec: spec("+", "f=", "n=", "p=", "D=")},
	"caffeinate":   {spec: spec("+", "d", "i", "m", "s", "u", "t=", "w=")},
	"arch": {
		spec: spec("+-", "x86_64", "x86_64h", "arm64", "arm64e", "arm64_32", "i386", "arch=", "d=", "e=", "32", "64", "c", "h"),
		doc:  "macOS arch -ARCH COMMAND… (Linux arch only prints the machine)",
	},
	"schroot": {
		spec: spec("+", "c|chroot=", "u|user=", "d|directory=", "o|option=", "n|session-name=", "p|preserve-environment", "a|all", "l|list",
			"i|info", "config", "location", "b|begin-session", "r|run-session", "e|end-session", "recover-session", "automatic-session",
			"q|quiet", "v|verbose", "h|help", "V|version"),
		bare: "shell", chdir: []string{"d"}, inspect: []string{"l", "i", "config", "location", "b", "e", "h", "V"},
	},
	"arch-chroot": {spec: spec("+", "N", "u=", "r", "h"), positional: 1, user: true, bare: "shell", inspect: []string{"h"}, newRoot: true},
	"sshpass":     {spec: spec("+", "p=", "f=", "d=", "e?", "P=", "v", "h", "V"), inspect: []string{"h", "V"}},
	"vagrant": {
		global: spec("+", "h|help", "v|version", "debug", "timestamp", "color", "no-color", "machine-readable", "no-tty"),
		spec:   spec("+", "c|command=", "p|plain", "t|tty", "no-tty", "h|help"),
		verb:   "ssh", code: []string{"c"}, data: true, inspect: []string{"h"},
		doc: "vagrant ssh -c CODE runs it in the machine",
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
	from := 1
	if l.verb != "" {
		g := parseOpts(orPlain(l.global), c.args, 1)
		if len(g.operands) == 0 || !g.operands[0].Static || g.operands[0].Value != l.verb {
			return // another subcommand: it runs nothing given to it
		}
		from = g.end + 1
	}
	c.launch(l, from)
}

// launch reads a launcher's options from argv[from] and runs what they
// and its operands say (ruleLaunch, and the run verbs of project tools:
// uv run, poetry run, conda run).
func (c *cmd) launch(l *launcher, from int) {
	if l.posFirst {
		from += l.positional
	}
	if l.lead && from < len(c.args) && !strings.HasPrefix(c.args[from].Value, "-") {
		from++
	}
	p := parseOpts(l.spec, c.args, from)
	c.explain(&p)
	if (c.name == "strace" || c.name == "ltrace") && p.has("p") {
		// Attached to a running process, it prints what that process
		// reads and writes: its secrets pass through.
		c.find(clsProcMem, c.span)
	}
	if p.has(l.inspect...) || len(l.needs) > 0 && !p.has(l.needs...) {
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
	if c.name == "xargs" {
		switch c.in.kind {
		case stdinPipe:
			c.w.meta[c.idx].consumer = "xargs" // judged with the pipeline
		case stdinText:
			if c.in.static {
				c.xargsInput(c.in.text)
			}
		}
	}
	lr := launchRun{l: l, positional: l.positional}
	if l.posFirst || p.has(l.posUnless...) {
		lr.positional = 0
	}
	if v, ok := p.value(l.exec...); ok {
		lr.prog, lr.hasProg = v, true
	}
	if v, ok := p.value(l.shArgs); ok && l.shArgs != "" {
		// The option's value is the shell's first argument.
		lr.prog, lr.hasProg = Arg{Value: "sh", Static: true, Span: c.span}, true
		p.operands = append([]Arg{v}, p.operands...)
	}
	if l.prefix != "" {
		lr.prefix = Arg{Value: l.prefix, Static: true, Span: c.span}
		if v, ok := p.value(l.shellOpt); ok {
			lr.prefix = v
		}
	}
	if v, ok := p.value(l.chdir...); ok {
		lr.dir, lr.hasDir = v, true
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
		if len(rest) > lr.positional+1 && c.w.probes < maxProbes {
			c.w.probes++
			c.launchRest(lr, rest[1:], true)
		}
	}
	c.launchRest(lr, rest, false)
}

// orPlain is s, or a spec that knows no options.
func orPlain(s *optSpec) *optSpec {
	if s == nil {
		return plainSpec
	}
	return s
}

var plainSpec = spec("+")

// launchRun is how one launcher invocation runs its operands.
type launchRun struct {
	l          *launcher
	positional int
	// prog is an option's program (start-stop-daemon --exec); prefix
	// the program the operands are handed to (capsh -- ARGS).
	prog, prefix Arg
	hasProg      bool
	// dir is where the command starts (env -C, sudo -D).
	dir    Arg
	hasDir bool
}

// launchRest runs what a launcher runs from its operands.
func (c *cmd) launchRest(lr launchRun, rest []Arg, alt bool) {
	l := lr.l
	if l.reexec != "" && len(rest) > 0 && rest[0].Static && rest[0].Value == l.reexec {
		c.run(append([]Arg{c.args[0]}, rest[1:]...), c.name+" "+l.reexec)
		return
	}
	if len(rest) < lr.positional {
		return
	}
	if l.newRoot && lr.positional == 1 && !lr.hasDir {
		lr.dir, lr.hasDir = rest[0], true
	}
	if c.name == "flock" && len(rest) >= 3 && (rest[1].Value == "-c" || rest[1].Value == "--command") {
		c.code(rest[2], "flock -c")
		return
	}
	rest = rest[lr.positional:]
	if l.data && !lr.hasProg {
		return
	}
	var assigns []string
	if l.assigns {
		for len(rest) > 0 && isAssign(rest[0].Value) {
			assigns = append(assigns, rest[0].Value)
			rest = rest[1:]
		}
	}
	switch {
	case lr.hasProg:
		rest = append([]Arg{lr.prog}, rest...)
	case lr.prefix.Value != "" && len(rest) > 0:
		rest = append([]Arg{lr.prefix}, rest...)
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
	if lr.hasDir {
		defer c.w.chdir(c.idx, lr.dir)()
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
	case l.joined && !lr.hasProg:
		c.codeText(rest, c.name)
	default:
		inner := c.run(rest, c.name, assigns...)
		if c.name == "xargs" && inner >= 0 && c.w.a.Commands[inner].key() == "rm" {
			c.w.find(inner, clsDeleteXargs, c.span)
		}
	}
}

// chdir moves the working directory to dir for what a launcher runs
// (env -C DIR, sudo -D DIR) and returns the function that moves it back.
// A directory that cannot be known makes it unknown; entering warden's
// own is self-access.
func (w *walker) chdir(idx int, dir Arg) func() {
	saved := w.dir
	w.dir = dirState{}
	if p, ok := w.resolvePath(dir); ok && isAbs(p) {
		w.dir = dirState{path: p, known: true, moved: !dotDot(dir.Value)}
		if cls, tier, d := w.pathClass(p, accRead); cls == clsWardenSelf {
			w.findTier(idx, cls, tier, dir.Span, d)
		}
	}
	return func() { w.dir = saved }
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

// maxXargsRuns bounds the commands one xargs input is read into.
const maxXargsRuns = 8

// xargsInput runs xargs's command with the input it reads, when that is
// known: `echo ~ | xargs rm -rf` deletes the home directory, `printf
// 'rm -rf ~' | xargs -I{} sh -c '{}'` runs the text.
func (c *cmd) xargsInput(text string) {
	p := parseOpts(launchers["xargs"].spec, c.args, 1)
	if len(p.unknown) > 0 || p.has("help", "version", "show-limits", "a") {
		return
	}
	cmdArgs := p.operands
	if len(cmdArgs) == 0 {
		cmdArgs = []Arg{{Value: "echo", Static: true, Span: c.span}}
	}
	var items []string
	switch {
	case p.has("0"):
		items = strings.Split(strings.TrimRight(text, "\x00"), "\x00")
	case p.has("I", "i", "L", "l"):
		items = strings.Split(strings.TrimRight(text, "\n"), "\n")
	default:
		items = strings.Fields(text)
	}
	repl, hasRepl := p.value("I")
	if !hasRepl && p.has("i") {
		repl, hasRepl = Arg{Value: "{}"}, true
		if v, ok := p.value("i"); ok && v.Value != "" {
			repl = v
		}
	}
	if !hasRepl {
		args := append([]Arg(nil), cmdArgs...)
		for _, it := range items {
			args = append(args, Arg{Value: it, Static: true, Span: c.span})
		}
		c.run(args, "xargs <input")
		return
	}
	for i, it := range items {
		if i >= maxXargsRuns {
			break
		}
		args := make([]Arg, len(cmdArgs))
		for j, a := range cmdArgs {
			args[j] = a
			if a.Static && repl.Value != "" && strings.Contains(a.Value, repl.Value) {
				args[j].Value = strings.ReplaceAll(a.Value, repl.Value, it)
				args[j].off = 0
			}
		}
		c.run(args, "xargs <input")
	}
}
