package shell

import "strings"

// Family persistence: installing something that runs later or at login
// (crontab, at, systemd timers and units, launchd, init scripts). Writes
// to autostart entries, unit files and crontabs are floors (see the
// protected-path table); these are the commands that install them.

var _ = family(func() {
	register("persistence", ruleCrontab, "crontab")
	register("persistence", ruleAt, "at", "batch")
	register("persistence", ruleSystemdRun, "systemd-run")
	register("persistence", ruleRcUpdate, "update-rc.d", "chkconfig", "rc-update", "sysrc")
})

var crontabSpec = spec("", "u=", "l", "r", "e", "i", "s", "n", "c", "T", "V", "h")

func ruleCrontab(c *cmd) {
	p := c.parse(crontabSpec)
	switch {
	case p.has("r"):
		c.find(clsCrontabRemove, c.span)
	case p.has("l", "V", "h", "T", "c", "n"):
	default:
		// crontab FILE, crontab - (stdin), crontab -e: a new crontab.
		c.findDetail(clsPersist, c.span, "installs a crontab")
		if len(p.operands) > 0 && p.operands[0].Value != "-" {
			c.reads(p.operands)
		}
	}
}

var atSpec = spec("", "V", "q=", "f=", "m", "M", "t=", "l", "d", "r", "b", "c", "u=", "v", "o")

// ruleAt: at and batch read commands from stdin (or -f FILE) and run
// them later: what they read is code, and scheduling it is persistence.
func ruleAt(c *cmd) {
	p := c.parse(atSpec)
	if p.has("l", "d", "r", "c", "V") {
		return
	}
	c.findDetail(clsPersist, c.span, c.name+" schedules commands")
	if f, ok := p.value("f"); ok {
		c.w.ranFile(c.idx, f, "sh")
		return
	}
	c.stdinCode("shell")
}

var systemdRunSpec = spec("+", "u|unit=", "p|property=", "description=", "slice=", "slice-inherit", "r|remain-after-exit", "send-sighup",
	"service-type=", "uid=", "gid=", "nice=", "working-directory=", "d|same-dir", "E|setenv=", "t|pty", "P|pipe", "q|quiet", "S|shell",
	"on-active=", "on-boot=", "on-startup=", "on-unit-active=", "on-unit-inactive=", "on-calendar=", "on-clock-change",
	"on-timezone-change", "path-property=", "socket-property=", "timer-property=", "no-block", "wait", "G|collect", "user", "system",
	"scope", "H|host=", "M|machine=", "no-ask-password", "json=", "ignore-failure", "background=", "expand-environment=", "h|help", "version")

// ruleSystemdRun runs its command now (as a transient unit, root by
// default) or later with --on-* timers: persistence.
func ruleSystemdRun(c *cmd) {
	p := c.parse(systemdRunSpec)
	if p.has("h", "version") {
		return
	}
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of systemd-run is not known")
	}
	if p.has("on-active", "on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar", "on-clock-change", "on-timezone-change") {
		c.findDetail(clsPersist, c.span, "systemd-run timer")
	}
	if p.has("S") || len(p.operands) == 0 {
		if !p.has("user") || p.has("uid") {
			c.find(clsPrivShell, c.span)
		}
		return
	}
	if d, ok := p.value("working-directory"); ok {
		defer c.w.chdir(c.idx, d)()
	}
	c.run(p.operands, "systemd-run")
}

func ruleRcUpdate(c *cmd) {
	for _, a := range c.args[1:] {
		switch strings.ToLower(a.Value) {
		case "add", "defaults", "enable", "on", "--add":
			c.findDetail(clsPersist, c.span, c.name+" "+a.Value)
			return
		case "del", "delete", "remove", "disable", "off", "--del":
			c.service(c.args[1:2])
			return
		}
	}
	if c.name == "sysrc" && len(c.args) > 1 && strings.Contains(c.args[1].Value, "_enable=") {
		c.findDetail(clsPersist, c.span, "sysrc")
	}
}
