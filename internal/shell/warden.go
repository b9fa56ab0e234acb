package shell

// Family warden: warden's own admin commands, which change policy or
// answer approvals, are hardline for an agent; its files are protected
// (see protected.go).

var _ = family(func() {
	register("warden", ruleWarden, "warden")
})

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
