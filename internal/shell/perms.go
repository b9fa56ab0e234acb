package shell

import (
	"regexp"
	"strings"
	"sync"
)

// Family perms: world-writable modes, recursive changes of system
// directories, recursive chown to root.

var _ = family(func() {
	register("perms", ruleChmod, "chmod")
	register("perms", ruleChown, "chown", "chgrp")
	register("perms", ruleChattr, "chattr", "setfacl")
	register("privilege", ruleSetcap, "setcap")
})

// ruleSetcap: file capabilities make a program privileged when it runs
// (setcap cap_setuid+ep python3 is setuid root by another name);
// removing them (-r) or verifying (-v) is not.
func ruleSetcap(c *cmd) {
	p := c.parse(spec("", "q", "v", "r", "n=", "f", "h"))
	if p.has("v", "r", "h") || len(p.operands) < 2 {
		return
	}
	c.findDetail(clsSetuid, c.span, "setcap "+p.operands[0].Value)
	c.writes(p.operands[1:])
}

var chmodSpec = spec("", "c|changes", "f|silent|quiet", "v|verbose", "no-preserve-root", "preserve-root", "reference=", "R|recursive",
	"help", "version")

var numericMode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-7]{1,4}$`) })

// modeWord is a symbolic mode that getopt would take for options
// (chmod -w file, chmod -x+X dir).
var modeWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[rwxXst]+([,+=-][ugoa]*[rwxXst]*)*$`) })

func ruleChmod(c *cmd) {
	// A mode like -w reads as options: take it out first.
	args := []Arg{c.args[0]}
	var mode *Arg
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		if mode == nil && a.Static && modeWord().MatchString(a.Value) {
			m := a
			mode = &m
			continue
		}
		args = append(args, a)
	}
	p := parseOpts(chmodSpec, args, 1)
	c.explain(&p)
	targets := p.operands
	if mode == nil {
		if _, ok := p.value("reference"); ok {
		} else if len(targets) > 0 {
			m := targets[0]
			mode, targets = &m, targets[1:]
		}
	}
	if mode != nil && worldWritable(mode.Value) {
		c.find(clsPermWorld, mode.Span)
	}
	if mode != nil && setuidMode(mode.Value) {
		c.find(clsSetuid, mode.Span)
	}
	if p.has("R") {
		c.systemRecursive(targets)
	}
}

func worldWritable(mode string) bool {
	if numericMode().MatchString(mode) {
		last := mode[len(mode)-1]
		return last == '2' || last == '3' || last == '6' || last == '7'
	}
	for _, clause := range strings.Split(mode, ",") {
		who, perm, ok := cutAny(clause, "+=")
		if !ok {
			continue
		}
		// "+w" without a who honours the umask, which keeps others out.
		if strings.ContainsAny(who, "oa") && strings.Contains(perm, "w") {
			return true
		}
	}
	return false
}

func cutAny(s, seps string) (before, after string, ok bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// systemRecursive flags a recursive permission change of / or a system
// directory.
func (c *cmd) systemRecursive(targets []Arg) {
	for _, t := range targets {
		r, ok := c.w.resolvePath(t)
		if !ok {
			continue
		}
		switch c.w.deleteTarget(r, t.Glob) {
		case clsDeleteRoot, clsDeleteSystem:
			c.findDetail(clsPermSystem, t.Span, r)
		case clsDeleteHome:
			c.findDetail(clsPermSystem, t.Span, r)
		}
	}
}

var chownSpec = spec("", "c|changes", "f|silent|quiet", "v|verbose", "dereference", "h|no-dereference", "from=", "no-preserve-root",
	"preserve-root", "reference=", "R|recursive", "H", "L", "P", "help", "version")

func ruleChown(c *cmd) {
	p := c.parse(chownSpec)
	if len(p.operands) == 0 {
		return
	}
	targets := p.operands
	owner := Arg{}
	if _, ok := p.value("reference"); !ok {
		owner, targets = p.operands[0], p.operands[1:]
	}
	if !p.has("R") {
		return
	}
	c.systemRecursive(targets)
	user, group, _ := strings.Cut(owner.Value, ":")
	if c.name == "chown" && (user == "root" || user == "0" || (user == "" && (group == "root" || group == "0"))) {
		c.find(clsChownRoot, owner.Span)
	}
}

// ruleChattr: attributes and ACLs change who may write a file.
func ruleChattr(c *cmd) {
	var ops []Arg
	for _, a := range c.args[1:] {
		if !strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "+") && !strings.HasPrefix(a.Value, "=") {
			ops = append(ops, a)
		}
	}
	if c.name == "setfacl" && len(ops) > 0 {
		ops = ops[1:] // the ACL spec
	}
	c.writes(ops)
}

// setuidMode reports a mode that sets the setuid bit: 4755, u+s, +s.
// (setgid on a directory, 2775 or g+s, is how shared directories work.)
func setuidMode(mode string) bool {
	if numericMode().MatchString(mode) {
		return len(mode) == 4 && (mode[0] == '4' || mode[0] == '5' || mode[0] == '6' || mode[0] == '7')
	}
	for _, clause := range strings.Split(mode, ",") {
		if who, perm, ok := cutAny(clause, "+="); ok && strings.Contains(perm, "s") && (who == "" || strings.ContainsAny(who, "ua")) {
			return true
		}
	}
	return false
}

var _ = family(func() {
	register("privilege", ruleAccount, "usermod", "useradd", "userdel", "groupadd", "groupdel", "gpasswd", "passwd", "chpasswd",
		"adduser", "deluser", "addgroup", "delgroup", "visudo", "vipw", "vigr", "pwck", "chage", "dscl", "sysadminctl")
})

// ruleAccount: account and group changes; reading (passwd -S, chage -l)
// is not one.
func ruleAccount(c *cmd) {
	switch c.name {
	case "passwd", "chage":
		if hasWord(c.args, "-S", "--status", "-l", "--list") && c.name == "chage" || hasWord(c.args, "-S", "--status") {
			return
		}
	case "dscl":
		if !hasWord(c.args, "-create", "-append", "-delete", "-passwd", "-change", "-merge") {
			return
		}
	case "pwck":
		if !hasWord(c.args, "-q") && hasWord(c.args, "-r", "--read-only") {
			return
		}
	}
	if len(c.args) == 1 && c.name != "passwd" && c.name != "visudo" && c.name != "vipw" && c.name != "vigr" {
		return // usage
	}
	c.find(clsAccount, c.span)
}
