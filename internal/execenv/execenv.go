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
	// Never marks names that must never persist or pass between calls
	// (a terminal session's saved state included), whatever the
	// operator's passthrough says. Never is checked against every rule,
	// not just the first match.
	Never bool
}

// Table is the one source of truth, checked in order: the first match
// decides; a name no rule matches is not passed.
var Table = []Rule{
	{"WARDEN_*", false, "warden's own settings and markers are never inherited", true},
	{"*KEY*", false, "looks like a credential: passes only when listed in tools.env_passthrough", false},
	{"*TOKEN*", false, "looks like a credential", false},
	{"*SECRET*", false, "looks like a credential", false},
	{"*PASSWORD*", false, "looks like a credential", false},
	{"*PASSWD*", false, "looks like a credential", false},
	{"*CREDENTIAL*", false, "looks like a credential", false},
	{"*AUTH*", false, "looks like a credential", false},
	{"*SESSION*", false, "session identity travels with the owner, never through the environment", true},
	{"*YOLO*", false, "approval bypasses are never inherited", true},
	{"*INTERACTIVE*", false, "presence is a live channel, never a marker", true},
	{"*EXEC_ASK*", false, "presence is a live channel, never a marker", true},
	{"*CRON*", false, "run identity travels with the owner", true},
	{"AWS_*", false, "cloud provider credentials", false},
	{"GOOGLE_*", false, "cloud provider credentials", false},
	{"AZURE_*", false, "cloud provider credentials", false},
	{"OPENAI_*", false, "model provider credentials", false},
	{"ANTHROPIC_*", false, "model provider credentials", false},
	{"GH_*", false, "forge credentials", false},
	{"GITHUB_*", false, "forge credentials", false},
	{"SSH_AUTH_SOCK", false, "an agent socket is a credential", false},
	{"LD_*", false, "loader variables change what every child runs", false},
	{"DYLD_*", false, "loader variables change what every child runs", false},
	{"BASH_*", false, "shell internals (BASH_ENV, BASH_FUNC_…) are the shell's, never a session's", true},
	{"BASHOPTS", false, "shell internals", true},
	{"SHELLOPTS", false, "shell internals", true},
	{"SHLVL", false, "shell internals", true},
	{"_", false, "shell internals", true},
	{"PWD", false, "the working directory is kept as such, never as a variable", true},
	{"OLDPWD", false, "the working directory is kept as such, never as a variable", true},
	{"ENV", false, "a file the shell sources at start", true},
	{"PROMPT_COMMAND", false, "runs code before prompts", true},
	{"PATH", true, "where commands are found", false},
	{"HOME", true, "the user's home directory", false},
	{"USER", true, "the user's name", false},
	{"LOGNAME", true, "the user's name", false},
	{"LANG", true, "locale", false},
	{"LC_*", true, "locale", false},
	{"TERM", true, "terminal type", false},
	{"TZ", true, "time zone", false},
	{"TMPDIR", true, "temporary directory", false},
	{"SHELL", true, "the user's shell", false},
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
	return !strings.HasPrefix(name, "WARDEN_") && passes(name, passthrough, false)
}

// passes reports whether the operator's passthrough list or else the
// first rule of Table that matches lets name through; a name that
// neither names gets unmatched.
func passes(name string, passthrough []string, unmatched bool) bool {
	if slices.Contains(passthrough, name) {
		return true
	}
	for _, r := range Table {
		if match(r.Pattern, name) {
			return r.Pass
		}
	}
	return unmatched
}

// Never reports names that must never persist or pass between calls:
// the table's rules marked Never (markers, session identity, warden's
// own, shell internals), whatever the passthrough list says.
func Never(name string) bool {
	if strings.HasPrefix(name, "WARDEN_") {
		return true
	}
	for _, r := range Table {
		if r.Never && match(r.Pattern, name) {
			return true
		}
	}
	return false
}

// Persist reports whether a variable a command exported may be kept in a
// terminal session's state for its next call: never for a Never name;
// for a name the table denies (credentials, loader variables) only when
// the operator lists it in passthrough; otherwise yes.
func Persist(name string, passthrough []string) bool {
	return !Never(name) && passes(name, passthrough, true)
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

// Markdown renders the table for docs/security.md, so the documentation is
// generated from the same rules the code applies.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| variables | passed to children | kept in a terminal session's state | why |\n|---|---|---|---|\n")
	for _, r := range Table {
		pass, keep := "no", "only if listed in the passthrough"
		if r.Pass {
			pass, keep = "yes", "yes"
		}
		if r.Never {
			keep = "never"
		}
		b.WriteString("| `" + r.Pattern + "` | " + pass + " | " + keep + " | " + r.Why + " |\n")
	}
	b.WriteString("| anything else | no, unless listed in the operator's passthrough | yes | children get only what they need |\n")
	return b.String()
}
