package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/internal/policy"
)

// Change is one difference between two configurations, for the log of a
// reload.
type Change struct {
	// Key is the setting, e.g. "approvals.deny" or "approvals.mode".
	Key string
	// Old and New are what it was and is. For lists they hold the
	// entries removed and added.
	Old, New string
	// Widens is set when the change lets through what was blocked or
	// asked before: a deny rule or protected path removed, a mode made
	// more permissive, an allowlist entry or write root added.
	Widens bool
}

// String is "key: old → new", marked when it widens.
func (c Change) String() string {
	s := fmt.Sprintf("%s: %s → %s", c.Key, c.Old, c.New)
	if c.Widens {
		s += " (widens)"
	}
	return s
}

// Diff lists what changed from old to new, in a fixed order; nil when
// nothing that matters to the policy did. A nil config is Default.
func Diff(old, new *Config) []Change {
	if old == nil {
		old = Default()
	}
	if new == nil {
		new = Default()
	}
	var out []Change
	add := func(key, o, n string, widens bool) {
		if o != n {
			out = append(out, Change{Key: key, Old: o, New: n, Widens: widens})
		}
	}
	a, b := old.Approvals, new.Approvals
	add("approvals.mode", a.Mode.String(), b.Mode.String(), modeRank[b.Mode] > modeRank[a.Mode])
	for _, m := range []struct {
		key  string
		o, n policy.UnattendedMode
	}{
		{"approvals.cron_mode", a.CronMode, b.CronMode},
		{"approvals.kanban_mode", a.KanbanMode, b.KanbanMode},
		{"approvals.single_query_mode", a.SingleQueryMode, b.SingleQueryMode},
		{"approvals.unattended_mode", a.UnattendedMode, b.UnattendedMode},
	} {
		add(m.key, m.o.String(), m.n.String(), unattendedRank[m.n] > unattendedRank[m.o])
	}
	add("approvals.timeout", a.Timeout.String(), b.Timeout.String(), false)
	add("approvals.denial_breaker_threshold", strconv.Itoa(a.DenialBreakerThreshold), strconv.Itoa(b.DenialBreakerThreshold),
		breakerLooser(a.DenialBreakerThreshold, b.DenialBreakerThreshold))
	add("approvals.smart_policy", quoteShort(a.SmartPolicy), quoteShort(b.SmartPolicy), a.SmartPolicy != b.SmartPolicy)
	add("approvals.smart_failure_threshold", strconv.Itoa(a.SmartFailureThreshold), strconv.Itoa(b.SmartFailureThreshold), false)
	// Leaving the strict profile lets unknown programs run unasked.
	add("analysis.profile", cmp.Or(old.Analysis.Profile, "default"), cmp.Or(new.Analysis.Profile, "default"),
		old.Analysis.Profile == "strict" && new.Analysis.Profile != "strict")
	lists := []struct {
		key    string
		o, n   []string
		widens func(removed, added []string) bool
	}{
		// A removed deny rule or protected path widens; so does an added
		// allowlist entry, write root or passed-through variable.
		{"approvals.deny", a.Deny, b.Deny, func(r, _ []string) bool { return len(r) > 0 }},
		{"command_allowlist", old.CommandAllowlist, new.CommandAllowlist, func(_, ad []string) bool { return len(ad) > 0 }},
		{"write.protected", old.Write.Protected, new.Write.Protected, func(r, _ []string) bool { return len(r) > 0 }},
		{"write.safe_roots", old.Write.SafeRoots, new.Write.SafeRoots, func(_, ad []string) bool {
			// No roots at all means writes may land anywhere.
			return len(ad) > 0 || (len(old.Write.SafeRoots) > 0 && len(new.Write.SafeRoots) == 0)
		}},
		// MCP rules are ordered (the first match decides): any change
		// widens unless it only appends deny rules.
		{"mcp.rules", mcpRules(old.MCP.Rules), mcpRules(new.MCP.Rules), func(_, _ []string) bool { return mcpWidens(old.MCP.Rules, new.MCP.Rules) }},
		{"tools.env_passthrough", old.Tools.EnvPassthrough, new.Tools.EnvPassthrough, func(_, ad []string) bool { return len(ad) > 0 }},
	}
	// Someone added to a chat allowlist may answer (or talk to the agent)
	// from then on: that widens.
	for _, k := range chatListKeys(old.Chat, new.Chat) {
		lists = append(lists, struct {
			key    string
			o, n   []string
			widens func(removed, added []string) bool
		}{k, chatList(old.Chat, k), chatList(new.Chat, k), func(_, ad []string) bool { return len(ad) > 0 }})
	}
	for _, l := range lists {
		if slices.Equal(l.o, l.n) {
			continue
		}
		removed, added := listDiff(l.o, l.n)
		c := Change{Key: l.key, Old: "removed " + list(removed), New: "added " + list(added), Widens: l.widens(removed, added)}
		if len(removed) == 0 && len(added) == 0 {
			c.Old, c.New = "order "+list(l.o), "order "+list(l.n)
		}
		out = append(out, c)
	}
	return out
}

// modeRank orders approvals.mode by how much it lets through.
var modeRank = map[policy.Mode]int{policy.ModeManual: 0, policy.ModeSmart: 1, policy.ModeOff: 2}

// unattendedRank orders unattended modes by how much they let through:
// deny, then ask (a human may approve), then approve.
var unattendedRank = map[policy.UnattendedMode]int{policy.UnattendedDeny: 0, policy.UnattendedAsk: 1, policy.UnattendedApprove: 2}

// breakerLooser: a higher threshold, or none (<= 0), trips later.
func breakerLooser(o, n int) bool {
	switch {
	case n <= 0:
		return o > 0
	case o <= 0:
		return false
	}
	return n > o
}

// listDiff returns the entries of o missing from n, and those of n
// missing from o.
func listDiff(o, n []string) (removed, added []string) {
	for _, x := range o {
		if !slices.Contains(n, x) {
			removed = append(removed, x)
		}
	}
	for _, x := range n {
		if !slices.Contains(o, x) {
			added = append(added, x)
		}
	}
	return removed, added
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "[]"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

func mcpRules(rs []MCPRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Match + "=" + r.Verdict.String()
	}
	return out
}

// mcpWidens reports whether new's rules may let through what old's
// blocked or asked: false only when new is old with deny rules appended.
func mcpWidens(o, n []MCPRule) bool {
	if len(n) < len(o) || !slices.Equal(mcpRules(o), mcpRules(n[:len(o)])) {
		return true
	}
	for _, r := range n[len(o):] {
		if r.Verdict != policy.Deny {
			return true
		}
	}
	return false
}

// chatLists flattens the chat: section's allowlists by dotted key
// ("chat.discord.approvers.users", "chat.slack.chats.C1.admins.users").
func chatLists(c Chat) map[string][]string {
	out := map[string][]string{}
	add := func(prefix string, a Allowlist) {
		out[prefix+".users"], out[prefix+".roles"] = a.Users, a.Roles
	}
	for _, p := range []struct {
		name string
		p    ChatPlatform
	}{{"discord", c.Discord}, {"slack", c.Slack}, {"telegram", c.Telegram}} {
		k := "chat." + p.name
		add(k+".approvers", p.p.Approvers)
		add(k+".admins", p.p.Admins)
		add(k+".users", p.p.Users)
		for _, o := range p.p.Chats {
			for name, a := range map[string]*Allowlist{"approvers": o.Approvers, "admins": o.Admins, "users": o.Users} {
				if a != nil {
					add(k+".chats."+o.ID+"."+name, *a)
				}
			}
		}
	}
	return out
}

// chatListKeys are the allowlist keys of either config, sorted.
func chatListKeys(o, n Chat) []string {
	var keys []string
	for _, m := range []map[string][]string{chatLists(o), chatLists(n)} {
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// chatList is one flattened allowlist of c.
func chatList(c Chat, key string) []string { return chatLists(c)[key] }
