package shell

import "strings"

// Family warden: warden's own admin commands, which change policy or
// answer approvals, are hardline for an agent; its files are protected
// (see protected.go).

var _ = family(func() {
	register("warden", ruleWarden, "warden")
})

// wardenAdmin are warden verbs that change policy or answer approvals.
var wardenAdmin = map[string]bool{"approvals": true, "approve": true, "deny": true, "grants": true, "grant": true, "config": true, "serve": true, "exec": true, "yolo": true, "sessions": true, "worker": true, "policy": true, "token": true, "console": true, "cron": true}

func ruleWarden(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		if v == "--state" || v == "--config" {
			i++
			continue
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		if wardenAdmin[v] && !(v == "config" && i+1 < len(c.args) && c.args[i+1].Value == "check") {
			c.find(clsWardenAdmin, c.span)
		}
		return
	}
}
