package shell

import (
	"path"
	"strings"
)

// Family warden: warden's own admin commands, which change policy or
// answer approvals, are hardline for an agent; its files are protected
// (see protected.go).

var _ = family(func() {
	register("warden", ruleWarden, "warden")
	register("warden", ruleGoRun, "go")
})

// goRunValued are go run's build flags that take the next word.
var goRunValued = map[string]bool{"-C": true, "-exec": true, "-tags": true, "-ldflags": true, "-gcflags": true, "-asmflags": true,
	"-mod": true, "-modfile": true, "-overlay": true, "-p": true, "-pgo": true, "-pkgdir": true, "-toolexec": true,
	"-buildmode": true, "-compiler": true, "-gccgoflags": true, "-installsuffix": true, "-covermode": true, "-coverpkg": true}

// ruleGoRun: `go run ./cmd/warden ARGS` (or warden's module path, at
// any version) is warden run from source: its ARGS are judged as
// warden's own.
func ruleGoRun(c *cmd) {
	args := c.args
	if len(args) < 3 || args[1].Value != "run" {
		return
	}
	i := 2
	for i < len(args) && strings.HasPrefix(args[i].Value, "-") && args[i].Value != "--" {
		if goRunValued[args[i].Value] || goRunValued["-"+args[i].Value] {
			i++
		}
		i++
	}
	if i < len(args) && args[i].Value == "--" {
		i++
	}
	if i >= len(args) {
		return
	}
	pkg := args[i]
	name, _, _ := strings.Cut(pkg.Value, "@")
	name = strings.TrimSuffix(name, "/")
	if !pkg.Static {
		return
	}
	if path.Base(name) == "warden" {
		prog := pkg
		prog.Value = "warden"
		c.run(append([]Arg{prog}, args[i+1:]...), "go run")
	}
}

// wardenAdmin are warden verbs that change policy or answer approvals.
var wardenAdmin = map[string]bool{"approvals": true, "approve": true, "deny": true, "grants": true, "grant": true, "config": true, "serve": true, "exec": true, "yolo": true, "sessions": true, "worker": true, "policy": true, "token": true, "console": true, "cron": true, "service": true}

// wardenSpec is warden's root options and the flags its commands share
// (cobra reads flags before or after the command name, no
// abbreviations).
var wardenSpec = spec("!", "log-format=", "log-level=", "state=", "config=", "socket=", "json", "h|help", "v|version")

func ruleWarden(c *cmd) {
	p := c.parse(wardenSpec)
	if len(p.operands) == 0 {
		return
	}
	v := p.operands[0].Value
	if !p.operands[0].Static {
		c.opaqueDetail(p.operands[0].Span, "the warden command is computed at run time")
		return
	}
	if wardenAdmin[v] && !(v == "config" && len(p.operands) > 1 && p.operands[1].Value == "check") {
		c.find(clsWardenAdmin, c.span)
	}
}
