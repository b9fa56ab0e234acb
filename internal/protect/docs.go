package protect

import (
	"fmt"
	"strings"
)

// Markdown renders the table for people: docs/protected-paths.md is
// this text (a test fails when they drift), and warden check --explain
// can show it. Warden's own directories appear by role, since where
// they are depends on the host.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Protected paths

<!-- Generated from internal/protect (Markdown). Do not edit: run
     go test ./internal/protect -run TestDocs -update -->

One table decides how every way of reading or writing a path is judged:
shell redirections and file commands, the write tool, MCP ` + "`write_file`" + `, the
Claude Code hook's Write, Edit, MultiEdit, NotebookEdit, Read, Grep and
Glob, and code that opens files. A path is judged after it is resolved:
` + "`~`" + ` and ` + "`~user`" + `, relative to the working directory, ` + "`..`" + ` cleaned (` + "`~/..`" + ` climbs out
of the home), and symlinks of existing components followed (a link named
` + "`notes.txt`" + ` that points at ` + "`~/.bashrc`" + ` is judged as ` + "`~/.bashrc`" + `).

Tiers:

- **hardline** — always denied.
- **floor** — denied in every mode: yolo, ` + "`mode: off`" + `, a container backend and
  grants do not lift it.
- **dangerous** — needs approval like any dangerous action.

Patterns: a pattern not starting with ` + "`/`" + ` matches at any depth (` + "`.ssh/**`" + ` is
` + "`~/.ssh`" + `, ` + "`/root/.ssh`" + ` and any other ` + "`.ssh`" + ` directory); ` + "`**`" + ` is any number of
directories, including none, so ` + "`X/**`" + ` is X and everything under it; ` + "`*`" + `, ` + "`?`" + `
and ` + "`[…]`" + ` match within one name. Matching ignores case. A shell glob target is
judged by whether it *could* match a protected path (a ` + "`**`" + ` in it
is not taken to stand for a protected directory's name).

When several rows match, the most severe tier wins. A write to an existing
file with more than one hard link is not plainly safe either, and no bypass
lets it through: any of its other names may be a protected file.

| pattern | access | tier | class | what |
|---|---|---|---|---|
`)
	rowOf := func(pattern string, e Entry) {
		p := "`" + pattern + "`"
		if len(e.Except) > 0 {
			p += " except " + "`" + strings.Join(e.Except, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s |\n", p, e.Access, e.Tier, e.Class, e.Why)
	}
	for _, role := range []string{"STATE_DIR", "CONFIG_DIR", "each extra path of warden's own"} {
		rowOf("<"+role+">/**", Entry{Access: ReadWrite, Tier: Hardline, Class: ClassSelf, Why: "warden's own state or configuration"})
	}
	for _, e := range New(Paths{}).Entries() {
		rowOf(e.Pattern, e)
	}
	b.WriteString("\n## Classes\n\n| class | meaning |\n|---|---|\n")
	for _, c := range Classes() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Key, c.Description)
	}
	return b.String()
}
