package shell

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Markdown renders the analyser's catalogue for docs/analysis.md: the
// classes by family with tier and description, the programs each family
// has rules for, the launchers with what they run, the interpreters
// whose inline code is read, and the known-safe list of
// analysis.profile: strict. It is generated from the same data the
// analyser runs on; a test fails when the docs drift from it.
func Markdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from internal/shell (Markdown). Do not edit: run\n     go test ./internal/shell -run TestDocs -update -->\n\n")

	b.WriteString("### Classes\n\n")
	b.WriteString("Tiers: **hardline** — always denied; **floor** — a protected path, denied in every mode; " +
		"**dangerous** — needs approval. *Opaque* classes are what the analyser could not see into: no bypass " +
		"(container, yolo, `mode: off`) and no grant lets them through; a human decides, and an unattended " +
		"owner is denied.\n\n")
	byFamily := map[string][]Class{}
	for _, c := range Catalogue() {
		byFamily[c.Family] = append(byFamily[c.Family], c)
	}
	for _, fam := range sortedKeys(byFamily) {
		fmt.Fprintf(&b, "**%s**\n\n", fam)
		tableRow(&b, "class", "tier", "what")
		tableRule(&b, 3)
		for _, c := range byFamily[fam] {
			tier := string(c.Tier)
			if c.Opaque {
				tier += ", opaque"
			}
			tableRow(&b, mdCode(c.Key), tier, escapeCell(c.Description))
		}
		b.WriteString("\n")
	}

	b.WriteString("### Programs with rules, by family\n\n")
	fp := FamilyPrograms()
	for _, fam := range sortedKeys(fp) {
		fmt.Fprintf(&b, "- **%s**: %s\n", fam, codeList(fp[fam]))
	}
	b.WriteString("\nAny other program is judged by its arguments (paths it names, warden's own files, secrets) " +
		"and, under `analysis.profile: strict`, is dangerous unless it is on the known-safe list below.\n\n")

	b.WriteString("### Launchers\n\nPrograms that run their operands (or an option's value) as a command. " +
		"Their options are read with getopt's rules; an option a launcher does not know makes the rest " +
		"`exec.dynamic` (both readings — the option with and without a value — are walked).\n\n")
	tableRow(&b, "launcher", "operands before the command", "runs nothing with", "shell code in", "as another user", "note")
	tableRule(&b, 6)
	for _, n := range sortedKeys(launchers) {
		l := launchers[n]
		tableRow(&b, mdCode(n), strconv.Itoa(l.positional), optList(l.inspect), optList(l.code), yes(l.user), escapeCell(l.doc))
	}

	b.WriteString("\n### Interpreters\n\nInline code (`-c`, `-e`, …), a program read from standard input and a " +
		"here-document go through the code analyser (`internal/codescan`) that judges the code tool: the " +
		"commands it finds are analysed here, and code it cannot read completely is `exec.inline_code` (opaque).\n\n")
	tableRow(&b, "program", "language", "inline code options", "reads a program from stdin")
	tableRule(&b, 4)
	for _, n := range sortedKeys(interpreters) {
		in := interpreters[n]
		tableRow(&b, mdCode(n), in.lang, optList(in.inline), yes(in.stdin))
	}

	b.WriteString("\n### Known-safe programs (`analysis.profile: strict`)\n\n")
	var safe []string
	for n := range knownSafe {
		if _, l := launchers[n]; l || shells[n] || interpreters[n] != nil {
			continue
		}
		safe = append(safe, n)
	}
	sort.Strings(safe)
	b.WriteString(codeList(safe) + ", and every launcher, shell and interpreter above (what they run is judged).\n")
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tableRow writes a row of a Markdown table.
func tableRow(b *strings.Builder, cells ...string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// tableRule writes the line under a Markdown table's header of n columns.
func tableRule(b *strings.Builder, n int) {
	b.WriteString(strings.Repeat("|---", n) + "|\n")
}

// mdCode is name as Markdown code.
func mdCode(name string) string { return "`" + name + "`" }

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdCode(n)
	}
	return strings.Join(out, ", ")
}

func optList(opts []string) string {
	out := make([]string, len(opts))
	for i, o := range opts {
		if len(o) == 1 {
			out[i] = "`-" + o + "`"
		} else {
			out[i] = "`--" + o + "`"
		}
	}
	return strings.Join(out, " ")
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
