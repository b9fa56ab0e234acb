package shell

import (
	"regexp"
	"strings"
	"sync"
)

// Family process and system: killing processes (all of them, warden),
// stopping the machine, stopping services.

var _ = family(func() {
	register("process", ruleKill, "kill")
	register("process", func(c *cmd) { c.find(clsKillAll, c.span) }, "killall5")
	register("process", ruleKillByName, "pkill", "killall", "skill", "slay")
	register("system", ruleShutdown, "shutdown", "reboot", "halt", "poweroff")
	register("system", ruleInit, "init", "telinit")
	register("system", ruleSystemctl, "systemctl")
	register("system", ruleService, "service", "rc-service")
	register("system", ruleLaunchctl, "launchctl")
	register("system", ruleLoginctl, "loginctl")
	register("system", ruleKexec, "kexec")
	register("system", ruleRtcwake, "rtcwake")
	register("system", ruleHistory, "history", "unset")
})

var killSignal = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-(9|KILL|SIGKILL|s|n|[0-9]+|[A-Z]+[0-9]*|SIG[A-Z]+[0-9]*)$`)
})

func ruleKill(c *cmd) {
	i := 1
	force := false
	if i < len(c.args) {
		a := c.args[i].Value
		switch {
		case a == "-s" || a == "-n" || a == "--signal":
			if i+1 < len(c.args) {
				force = isKillSig(c.args[i+1].Value)
			}
			i += 2
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return
		case strings.HasPrefix(a, "--signal="):
			force = isKillSig(a[len("--signal="):])
			i++
		case killSignal().MatchString(a):
			force = isKillSig(strings.TrimPrefix(a, "-"))
			i++
		}
	}
	if i < len(c.args) && c.args[i].Value == "--" {
		i++
	}
	for _, op := range c.args[i:] {
		if op.Value == "-1" {
			c.find(clsKillAll, c.span)
			return
		}
		if !op.Static && (strings.Contains(op.Value, "pgrep") || strings.Contains(op.Value, "pidof")) {
			if strings.Contains(op.Value, "warden") {
				c.find(clsKillWarden, op.Span)
			}
			if force {
				c.find(clsForceKill, c.span)
			}
		}
		if op.Value == "1" && force {
			c.find(clsShutdown, op.Span) // killing init stops the machine
		}
	}
}

func isKillSig(s string) bool {
	s = strings.ToUpper(strings.TrimPrefix(s, "SIG"))
	return s == "9" || s == "KILL"
}

var killByNameSpec = spec("", "s|signal=", "u|euid=", "U|uid=", "g|pgroup=", "G|group=", "t|terminal=", "P|parent=", "F|pidfile=",
	"session=", "ns=", "nslist=", "older|o=", "newer|n=", "older-than=", "younger-than=", "e|exact", "f|full", "x|exact", "c|count",
	"i|ignore-case|interactive", "r|regexp=", "q|quiet", "v|verbose|inverse", "w|wait", "I", "y=", "Z|context=", "l|list", "V|version",
	"h|help", "e", "cgroup=", "require-handler", "H", "A|ignore-ancestors", "logpidfile")

func ruleKillByName(c *cmd) {
	// -9 / -KILL style signals would read as unknown options: take them
	// first.
	force := false
	var rest []Arg
	rest = append(rest, c.args[0])
	for _, a := range c.args[1:] {
		v := a.Value
		if v == "-KILL" || v == "-SIGKILL" || v == "-9" || v == "-s9" {
			force = true
			continue
		}
		if killSignal().MatchString(v) && v != "-s" && v != "-n" && len(v) > 2 && v[1] >= 'A' && v[1] <= 'Z' {
			continue
		}
		rest = append(rest, a)
	}
	p := parseOpts(killByNameSpec, rest, 1)
	if v, ok := p.value("s"); ok && isKillSig(v.Value) {
		force = true
	}
	for _, op := range p.operands {
		low := strings.ToLower(op.Value)
		if strings.Contains(low, "warden") {
			c.find(clsKillWarden, op.Span)
		}
		if c.name == "killall" && (low == "init" || low == "systemd") || c.name == "pkill" && (op.Value == "." || op.Value == ".*" || op.Value == "") {
			c.find(clsKillAll, op.Span)
		}
	}
	if c.name == "killall" && len(p.operands) == 0 && p.has("u") {
		force = true // every process of a user
	}
	if force {
		c.find(clsForceKill, c.span)
	}
}

func ruleShutdown(c *cmd) {
	for _, a := range c.args[1:] {
		if a.Value == "-c" || a.Value == "--help" || a.Value == "--version" || a.Value == "--show" {
			return
		}
	}
	c.find(clsShutdown, c.span)
}

func ruleInit(c *cmd) {
	if len(c.args) > 1 && slicesHas([]string{"0", "6", "1", "s", "S", "single"}, c.args[1].Value) {
		c.find(clsShutdown, c.span)
	}
}

var systemctlSpec = spec("", "H|host=", "M|machine=", "t|type=", "p|property=", "P=", "s|signal=", "state=", "n|lines=", "o|output=",
	"root=", "image=", "kill-whom|kill-value=", "job-mode=", "what=", "boot-loader-menu=", "boot-loader-entry=", "reboot-argument=",
	"timestamp=", "message=", "drop-in=", "when=", "legend=", "check-inhibitors=", "preset-mode=", "a|all", "r|recursive", "reverse",
	"after", "before", "with-dependencies", "l|full", "value", "show-types", "i|ignore-inhibitors", "dry-run", "q|quiet", "no-warn",
	"wait", "no-block", "user", "system", "global", "no-wall", "no-reload", "no-ask-password", "f|force", "runtime", "now", "firmware-setup",
	"plain", "no-pager", "no-legend", "h|help", "version", "failed", "show-transaction", "T", "read-only", "mkdir", "marked", "enable")

// ruleSystemctl: power verbs and targets stop the machine; stop, disable,
// mask stop services; enable and link install them to start later.
func ruleSystemctl(c *cmd) {
	p := c.parse(systemctlSpec)
	if len(p.operands) == 0 {
		return
	}
	verb := p.operands[0].Value
	units := p.operands[1:]
	power := func() bool {
		for _, op := range units {
			for _, t := range []string{"poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "soft-reboot", "shutdown"} {
				if op.Value == t || op.Value == t+".target" {
					return true
				}
			}
		}
		return false
	}
	switch verb {
	case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue":
		c.find(clsShutdown, c.span)
	case "isolate", "start", "restart", "try-restart", "reload-or-restart":
		if power() {
			c.find(clsShutdown, c.span)
			return
		}
		if verb == "isolate" || verb == "restart" || verb == "try-restart" || verb == "reload-or-restart" {
			c.service(units)
		}
	case "stop", "disable", "mask", "kill", "force-reload", "freeze":
		c.service(units)
		if verb == "disable" && p.has("now") {
			c.service(units)
		}
	case "enable", "link", "reenable", "preset", "add-wants", "add-requires", "edit", "set-default":
		c.findDetail(clsPersist, c.span, "systemctl "+verb)
		if p.has("now") && verb == "enable" && power() {
			c.find(clsShutdown, c.span)
		}
		if verb == "set-default" && power() {
			c.find(clsShutdown, c.span)
		}
	}
}

// service records a service stop, and one of warden's own.
func (c *cmd) service(units []Arg) {
	for _, op := range units {
		if strings.Contains(op.Value, "warden") {
			c.find(clsKillWarden, op.Span)
		}
	}
	c.find(clsService, c.span)
}

func ruleService(c *cmd) {
	if len(c.args) > 2 && slicesHas([]string{"stop", "restart", "disable", "force-reload", "force-stop", "zap"}, c.args[2].Value) {
		c.service(c.args[1:2])
	}
}

func ruleLaunchctl(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	switch c.args[1].Value {
	case "unload", "bootout", "stop", "remove", "kill", "disable":
		c.service(c.args[2:])
	case "load", "bootstrap", "enable", "submit":
		c.findDetail(clsPersist, c.span, "launchctl "+c.args[1].Value)
	case "reboot":
		c.find(clsShutdown, c.span)
	}
}

func ruleLoginctl(c *cmd) {
	for _, a := range c.args[1:] {
		switch a.Value {
		case "poweroff", "reboot", "halt", "kexec":
			c.find(clsShutdown, c.span)
			return
		case "enable-linger":
			c.findDetail(clsPersist, c.span, "loginctl enable-linger")
			return
		case "terminate-user", "kill-user", "terminate-session", "kill-session", "terminate-seat":
			c.find(clsForceKill, c.span)
			return
		}
	}
}

func ruleKexec(c *cmd) {
	if hasWord(c.args, "-e", "--exec", "-f", "--force") {
		c.find(clsShutdown, c.span)
	}
}

func ruleRtcwake(c *cmd) {
	for i, a := range c.args {
		if (a.Value == "-m" || a.Value == "--mode") && i+1 < len(c.args) && (c.args[i+1].Value == "off" || c.args[i+1].Value == "disk") ||
			a.Value == "--mode=off" || a.Value == "-moff" {
			c.find(clsShutdown, c.span)
		}
	}
}

// ruleHistory: history -c clears the shell's history, -w/-a with a file
// overwrite one.
func ruleHistory(c *cmd) {
	if c.name == "unset" {
		if hasWord(c.args, "HISTFILE", "HISTSIZE", "HISTFILESIZE") {
			c.find(clsHistoryErase, c.span)
		}
		return
	}
	if hasWord(c.args, "-c", "-d", "-cw", "-wc") {
		c.find(clsHistoryErase, c.span)
	}
}
