package ccperm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// q quotes s as a YAML double-quoted scalar (JSON's quoting is valid
// YAML).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Fragment renders the translation as a warden config fragment.
func (r Result) Fragment(source string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# From the Claude Code permission rules of %s (warden import claude-code).\n", source)
	b.WriteString("# command_allowlist, approvals.deny and mcp.rules apply to every owner (chat,\n# cron, kanban, every agent), not only Claude Code.\n")
	if r.Empty() {
		b.WriteString("# Nothing could be translated.\n")
		return b.Bytes()
	}
	b.WriteString(r.sections())
	return b.Bytes()
}

// sections renders the keys alone, for merging.
func (r Result) sections() string {
	var b strings.Builder
	if len(r.Deny) > 0 {
		b.WriteString("approvals:\n  deny:\n")
		for _, g := range r.Deny {
			b.WriteString("    - " + q(g) + "\n")
		}
	}
	if len(r.Allowlist) > 0 {
		b.WriteString("command_allowlist:\n")
		for _, e := range r.Allowlist {
			b.WriteString("  - " + q(e) + "\n")
		}
	}
	if len(r.MCPRules) > 0 {
		b.WriteString("mcp:\n  rules:\n")
		for _, m := range r.MCPRules {
			b.WriteString("    - {match: " + q(m.Match) + ", action: " + m.Action + "}\n")
		}
	}
	return b.String()
}

// Report writes what became of each rule: translated ones first, then
// the rest with the reason.
func (r Result) Report(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var done, skipped []Note
	for _, n := range r.Notes {
		if n.Translated() {
			done = append(done, n)
		} else {
			skipped = append(skipped, n)
		}
	}
	fmt.Fprintf(tw, "Translated (%d of %d rules; the entries apply to every owner, not only Claude Code):\n", len(done), len(r.Notes))
	for _, n := range done {
		fmt.Fprintf(tw, "  %s\t%s\t→ %s\n", n.List, n.Rule, strings.Join(n.Became, "; "))
		if n.Why != "" {
			fmt.Fprintf(tw, "  \t\t  (%s)\n", n.Why)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(tw, "Not translated (%d):\n", len(skipped))
		for _, n := range skipped {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", n.List, n.Rule, n.Why)
		}
	}
	return tw.Flush()
}
