// Package execenv builds the environment of every process warden spawns
// from an allowlist (invariant 3): a child never gets a copy of warden's
// environment, so approval markers, session keys, yolo flags and
// credentials are not inherited. One table drives the allowlist, the
// strip rules and the documentation.
package execenv

import (
	"slices"
	"sort"
	"strings"
)

// Rule says what happens to variables whose names match Pattern.
type Rule struct {
	// Pattern is an exact name, a prefix ending in "*" or a "*…*"
	// substring match.
	Pattern string
	// Pass is true for names children get from warden's environment.
	Pass bool
	// Why explains the rule in the docs.
	Why string
}

// Table is the one source of truth, checked in order: the first match
// decides; a name no rule matches is not passed.
var Table = []Rule{
	{"WARDEN_*", false, "warden's own settings and markers are never inherited"},
	{"*KEY*", false, "looks like a credential: passes only when listed in tools.env_passthrough"},
	{"*TOKEN*", false, "looks like a credential"},
	{"*SECRET*", false, "looks like a credential"},
	{"*PASSWORD*", false, "looks like a credential"},
	{"*PASSWD*", false, "looks like a credential"},
	{"*CREDENTIAL*", false, "looks like a credential"},
	{"*AUTH*", false, "looks like a credential"},
	{"*SESSION*", false, "session identity travels with the owner, never through the environment"},
	{"*YOLO*", false, "approval bypasses are never inherited"},
	{"*INTERACTIVE*", false, "presence is a live channel, never a marker"},
	{"*EXEC_ASK*", false, "presence is a live channel, never a marker"},
	{"*CRON*", false, "run identity travels with the owner"},
	{"AWS_*", false, "cloud provider credentials"},
	{"GOOGLE_*", false, "cloud provider credentials"},
	{"AZURE_*", false, "cloud provider credentials"},
	{"OPENAI_*", false, "model provider credentials"},
	{"ANTHROPIC_*", false, "model provider credentials"},
	{"GH_*", false, "forge credentials"},
	{"GITHUB_*", false, "forge credentials"},
	{"SSH_AUTH_SOCK", false, "an agent socket is a credential"},
	{"LD_*", false, "loader variables change what every child runs"},
	{"DYLD_*", false, "loader variables change what every child runs"},
	{"PATH", true, "where commands are found"},
	{"HOME", true, "the user's home directory"},
	{"USER", true, "the user's name"},
	{"LOGNAME", true, "the user's name"},
	{"LANG", true, "locale"},
	{"LC_*", true, "locale"},
	{"TERM", true, "terminal type"},
	{"TZ", true, "time zone"},
	{"TMPDIR", true, "temporary directory"},
	{"SHELL", true, "the user's shell"},
}

// match reports whether name matches a table pattern.
func match(pattern, name string) bool {
	switch {
	case strings.HasPrefix(pattern, "*") && strings.HasSuffix(pattern, "*") && len(pattern) > 1:
		return strings.Contains(name, pattern[1:len(pattern)-1])
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(name, pattern[:len(pattern)-1])
	}
	return name == pattern
}

// Allowed reports whether a variable passes from warden's environment to
// a child, given the operator's explicit passthrough list. Warden's own
// variables never pass, even when listed.
func Allowed(name string, passthrough []string) bool {
	if strings.HasPrefix(name, "WARDEN_") {
		return false
	}
	if slices.Contains(passthrough, name) {
		return true
	}
	for _, r := range Table {
		if match(r.Pattern, name) {
			return r.Pass
		}
	}
	return false
}

// Never reports names that must never persist or pass between calls:
// the rules that deny regardless of passthrough listing other than
// explicit credentials (markers, session identity, warden's own).
func Never(name string) bool {
	if strings.HasPrefix(name, "WARDEN_") {
		return true
	}
	for _, p := range []string{"*SESSION*", "*YOLO*", "*INTERACTIVE*", "*EXEC_ASK*", "*CRON*"} {
		if match(p, name) {
			return true
		}
	}
	return false
}

// Build returns a child environment: the allowed variables of parent
// (a list of NAME=VALUE, as given by the caller at the edge — this
// package never reads the process environment itself), then extra, which
// the spawner sets explicitly and which wins.
func Build(parent []string, passthrough []string, extra map[string]string) []string {
	out := make([]string, 0, 16+len(extra))
	seen := map[string]bool{}
	for k := range extra {
		seen[k] = true
	}
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || seen[name] || !Allowed(name, passthrough) {
			continue
		}
		seen[name] = true
		out = append(out, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	if !seen["PATH"] {
		out = append(out, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	return out
}

// Markdown renders the table for the README, so the documentation is
// generated from the same rules the code applies.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| variables | passed to children | why |\n|---|---|---|\n")
	for _, r := range Table {
		pass := "no"
		if r.Pass {
			pass = "yes"
		}
		b.WriteString("| `" + r.Pattern + "` | " + pass + " | " + r.Why + " |\n")
	}
	b.WriteString("| anything else | no, unless listed in the operator's passthrough | children get only what they need |\n")
	return b.String()
}
