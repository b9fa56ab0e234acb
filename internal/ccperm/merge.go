package ccperm

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/wardenhq/warden/internal/config"
)

// Merge adds r's entries to a warden config file's text, leaving the
// rest of it (comments included) as it was. Entries the file already
// has are skipped; the Result returned holds what was added. The merged
// text must parse as a valid config, or Merge fails and nothing is to
// be written.
func Merge(existing []byte, name string, r Result) ([]byte, Result, error) {
	add := Result{}
	var cur *config.Config
	if len(bytes.TrimSpace(existing)) > 0 {
		c, _, err := config.Parse(existing, name)
		if err != nil {
			return nil, add, fmt.Errorf("the config to merge into is not valid: %w", err)
		}
		cur = c
	} else {
		cur = config.Default()
	}
	for _, g := range r.Deny {
		if !slices.Contains(cur.Approvals.Deny, g) {
			add.Deny = append(add.Deny, g)
		}
	}
	for _, e := range r.Allowlist {
		if !slices.Contains(cur.CommandAllowlist, e) {
			add.Allowlist = append(add.Allowlist, e)
		}
	}
	for _, m := range r.MCPRules {
		if !slices.ContainsFunc(cur.MCP.Rules, func(x config.MCPRule) bool { return x.Match == m.Match }) {
			add.MCPRules = append(add.MCPRules, m)
		}
	}
	if add.Empty() {
		return existing, add, nil
	}
	f, err := parser.ParseBytes(existing, parser.ParseComments)
	if err != nil {
		return nil, add, err
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		out := append(bytes.TrimRight(existing, "\n"), '\n')
		if len(bytes.TrimSpace(existing)) == 0 {
			out = nil
		}
		out = append(out, add.sections()...)
		return check(out, name, add)
	}
	root, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, add, fmt.Errorf("the config is not a mapping")
	}
	has := func(m *ast.MappingNode, key string) *ast.MappingValueNode {
		if m == nil {
			return nil
		}
		for _, v := range m.Values {
			if v.Key.String() == key {
				return v
			}
		}
		return nil
	}
	mapping := func(v *ast.MappingValueNode) *ast.MappingNode {
		if v == nil {
			return nil
		}
		m, _ := v.Value.(*ast.MappingNode)
		return m
	}
	merge := func(at, frag string) error {
		p, err := yaml.PathString(at)
		if err != nil {
			return err
		}
		nf, err := parser.ParseBytes([]byte(frag), 0)
		if err != nil {
			return err
		}
		return p.MergeFromNode(f, nf.Docs[0].Body)
	}
	seq := func(items []string, indent string) string {
		var b bytes.Buffer
		for _, it := range items {
			b.WriteString(indent + "- " + it + "\n")
		}
		return b.String()
	}
	quoted := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = q(x)
		}
		return out
	}
	var steps []func() error
	if len(add.Deny) > 0 {
		appr := has(root, "approvals")
		switch {
		case has(mapping(appr), "deny") != nil:
			steps = append(steps, func() error { return merge("$.approvals.deny", seq(quoted(add.Deny), "")) })
		case appr != nil && mapping(appr) != nil:
			steps = append(steps, func() error { return merge("$.approvals", "deny:\n"+seq(quoted(add.Deny), "  ")) })
		case appr != nil:
			return nil, add, fmt.Errorf("approvals: is not a mapping")
		default:
			steps = append(steps, func() error { return merge("$", "approvals:\n  deny:\n"+seq(quoted(add.Deny), "    ")) })
		}
	}
	if len(add.Allowlist) > 0 {
		if has(root, "command_allowlist") != nil {
			steps = append(steps, func() error { return merge("$.command_allowlist", seq(quoted(add.Allowlist), "")) })
		} else {
			steps = append(steps, func() error { return merge("$", "command_allowlist:\n"+seq(quoted(add.Allowlist), "  ")) })
		}
	}
	if len(add.MCPRules) > 0 {
		var rules []string
		for _, m := range add.MCPRules {
			rules = append(rules, "{match: "+q(m.Match)+", action: "+m.Action+"}")
		}
		mc := has(root, "mcp")
		switch {
		case has(mapping(mc), "rules") != nil:
			steps = append(steps, func() error { return merge("$.mcp.rules", seq(rules, "")) })
		case mc != nil && mapping(mc) != nil:
			steps = append(steps, func() error { return merge("$.mcp", "rules:\n"+seq(rules, "  ")) })
		case mc != nil:
			return nil, add, fmt.Errorf("mcp: is not a mapping")
		default:
			steps = append(steps, func() error { return merge("$", "mcp:\n  rules:\n"+seq(rules, "    ")) })
		}
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, add, fmt.Errorf("merge: %w", err)
		}
	}
	out := []byte(f.String())
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return check(out, name, add)
}

// check refuses merged text that is not a valid config, or that lost
// an entry on the way.
func check(out []byte, name string, add Result) ([]byte, Result, error) {
	c, _, err := config.Parse(out, name)
	if err != nil {
		return nil, add, fmt.Errorf("the merged config would not be valid (nothing written): %w", err)
	}
	for _, g := range add.Deny {
		if !slices.Contains(c.Approvals.Deny, g) {
			return nil, add, fmt.Errorf("merge lost approvals.deny %q (nothing written)", g)
		}
	}
	for _, e := range add.Allowlist {
		if !slices.Contains(c.CommandAllowlist, e) {
			return nil, add, fmt.Errorf("merge lost command_allowlist %q (nothing written)", e)
		}
	}
	for _, m := range add.MCPRules {
		if !slices.ContainsFunc(c.MCP.Rules, func(x config.MCPRule) bool { return x.Match == m.Match && x.Verdict.String() == m.Action }) {
			return nil, add, fmt.Errorf("merge lost mcp.rules %q (nothing written)", m.Match)
		}
	}
	return out, add, nil
}
