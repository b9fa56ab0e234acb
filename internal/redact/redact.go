// Package redact hides credentials in command lines and code shown in
// the audit log. The display copy hides them; the audit record's hash
// still pins the exact payload.
package redact

import "regexp"

// secrets matches credentials in command lines and code. The display
// copy hides them; the hash still pins the exact payload.
var secrets = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic|token)\s+)([^\s'"]+)`), "${1}***"},
	{regexp.MustCompile(`(?i)((?:api[_-]?key|token|secret|password|passwd|pwd|credential)[a-z0-9_-]*\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s'"]+)`), "${1}***"},
	{regexp.MustCompile(`(?i)(-u\s+[^:\s]+:)([^\s'"@]+)`), "${1}***"},
	{regexp.MustCompile(`(://[^:/\s]+:)([^@/\s]+)(@)`), "${1}***${3}"},
	{regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20})\b`), "***"},
	// warden's own login links, console sessions and API tokens.
	{regexp.MustCompile(`\bwd[lst]_[A-Za-z0-9_-]{40,}`), "***"},
}

// String hides credentials in s for display.
func String(s string) string {
	for _, r := range secrets {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}
