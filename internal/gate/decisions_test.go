package gate

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner/ownertest"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions/*.txtar's want sections and docs/decisions.md")

// The golden decision files (testdata/decisions/*.txtar) document the
// decision table by example: each holds a config, a setup (grants, yolo
// switches, a reviewer's verdict, protected paths) and cases, one per
// line, "OWNER | ACTION"; the test decides every case with the real
// gate and compares the verdict, the rule, the classes and the path
// through the table with the file's want section (-update rewrites it).
// docs/decisions.md is generated from the same runs.
//
// OWNER is the owner notation (owner.Parse) with " @SURFACE" for an
// attended owner (ownertest.Parse), or "none". ACTION is "shell CMD",
// "write PATH", "mcp SERVER/TOOL" (read-only: "mcp-ro SERVER/TOOL"),
// "code LANGUAGE SOURCE" or "docker CMD" (a shell command in a container
// backend).
//
// Setup lines: "process_yolo", "session_yolo KEY", "grant always ENTRY",
// "grant session=KEY ENTRY" (ENTRY as in command_allowlist), "guardian
// approve|deny|escalate", "protected PATH" (warden's own state: Paths.Protected), "grants_fail".

// goldenCase is one decided case.
type goldenCase struct {
	file, owner, act string
	// about is the file's comment: what its cases show.
	about string
	d     Decision
}

// parseAction reads the ACTION notation.
func parseAction(s string) (action.Action, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	switch kind {
	case "shell":
		return action.NewShell(rest), nil
	case "docker":
		return action.NewShell(rest).On("docker"), nil
	case "write":
		return action.NewWrite(rest, 1), nil
	case "mcp", "mcp-ro":
		server, tool, ok := strings.Cut(rest, "/")
		if !ok {
			return action.Action{}, fmt.Errorf("mcp %q: want SERVER/TOOL", rest)
		}
		return action.NewMCP(server, tool, nil, kind == "mcp-ro"), nil
	case "code":
		lang, src, _ := strings.Cut(rest, " ")
		return action.NewCode(lang, src), nil
	}
	return action.Action{}, fmt.Errorf("action %q: want shell, docker, write, mcp, mcp-ro or code", s)
}

// goldenSetup reads a file's config and setup sections into a setup.
func goldenSetup(ar *txtar.Archive) (setup, error) {
	var s setup
	for _, f := range ar.Files {
		switch f.Name {
		case "config.yaml":
			s.yaml = string(f.Data)
		case "setup":
			for _, line := range strings.Split(string(f.Data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				verb, arg, _ := strings.Cut(line, " ")
				switch verb {
				case "process_yolo":
					s.processYolo = true
				case "session_yolo":
					s.yolo = append(s.yolo, arg)
				case "grants_fail":
					s.grantsErr = true
				case "protected":
					s.protected = append(s.protected, arg)
				case "guardian":
					s.guardian = fixedGuardian{r: GuardianResult{Verdict: GuardianVerdict(arg), Reason: "the reviewer says " + arg}}
				case "grant":
					scope, entry, _ := strings.Cut(arg, " ")
					g, err := grant.Parse(entry)
					if err != nil {
						return s, fmt.Errorf("%s: %w", line, err)
					}
					g.ID = fmt.Sprintf("g%d", len(s.grants)+1)
					if key, ok := strings.CutPrefix(scope, "session="); ok {
						g.Scope, g.Session = grant.Session, key
					} else if scope == "always" {
						g.Scope = grant.Permanent
					} else {
						return s, fmt.Errorf("%s: want always or session=KEY", line)
					}
					s.grants = append(s.grants, g)
				default:
					return s, fmt.Errorf("unknown setup line %q", line)
				}
			}
		}
	}
	return s, nil
}

// render is a case's want text.
func (c goldenCase) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s | %s\n  %s by %s", c.owner, c.act, c.d.Verdict, c.d.Rule)
	if len(c.d.Classes) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(c.d.Classes, " "))
	}
	b.WriteString("\n  rows")
	for _, s := range reached(c.d.Steps) {
		fmt.Fprintf(&b, " %d:%s", s.N, s.Outcome)
	}
	b.WriteString("\n")
	return b.String()
}

// reached are the rows the decision went through.
func reached(steps []Step) []Step {
	var out []Step
	for _, s := range steps {
		if s.Outcome == Pass || s.Outcome == Skip || s.Outcome == Decided {
			out = append(out, s)
		}
	}
	return out
}

// runGolden decides every case of every file, checking (or with
// -update, rewriting) the want sections.
func runGolden(t *testing.T) []goldenCase {
	files, err := filepath.Glob(filepath.Join("testdata", "decisions", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden decision files (%v)", err)
	}
	var all []goldenCase
	for _, path := range files {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := goldenSetup(ar)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		g := s.gate(t)
		var want *txtar.File
		var got strings.Builder
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		for i := range ar.Files {
			f := &ar.Files[i]
			switch f.Name {
			case "want":
				want = f
			case "cases":
				for _, line := range strings.Split(string(f.Data), "\n") {
					if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
						continue
					}
					ownerText, actText, ok := strings.Cut(line, "|")
					if !ok {
						t.Fatalf("%s: case %q: want OWNER | ACTION", path, line)
					}
					o, err := ownertest.Parse(ownerText)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					act, err := parseAction(actText)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					c := goldenCase{file: name, about: strings.Join(strings.Fields(string(ar.Comment)), " "), owner: strings.TrimSpace(ownerText), act: strings.TrimSpace(actText), d: decide(t, g, o, act)}
					all = append(all, c)
					got.WriteString(c.render())
				}
			}
		}
		if *update {
			if want == nil {
				ar.Files = append(ar.Files, txtar.File{Name: "want"})
				want = &ar.Files[len(ar.Files)-1]
			}
			want.Data = []byte(got.String())
			if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want == nil || string(want.Data) != got.String() {
			t.Errorf("%s: decisions differ from the want section (go test ./internal/gate -run TestGoldenDecisions -update, then review the diff):\n%s", path, got.String())
		}
	}
	return all
}

// ruleIDs are the Rule* constants of decision.go, read from the source
// so a new rule cannot be left out of the examples.
func ruleIDs(t *testing.T) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), "decision.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Rule") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, _ := strconv.Unquote(lit.Value)
					out[v] = n.Name
				}
			}
		}
	}
	return out
}

// TestGoldenDecisions runs the golden decision files, checks that every
// rule id the gate declares is shown by at least one case, and keeps
// docs/decisions.md generated from them.
func TestGoldenDecisions(t *testing.T) {
	cases := runGolden(t)
	rules := ruleIDs(t)
	if len(rules) < 20 {
		t.Fatalf("only %d rule ids read from decision.go", len(rules))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.d.Rule] = true
		if _, ok := rules[c.d.Rule]; !ok && !*update {
			t.Errorf("%s: %s | %s decided by %q, which is no Rule constant", c.file, c.owner, c.act, c.d.Rule)
		}
	}
	for id, name := range rules {
		if !seen[id] {
			t.Errorf("no golden case is decided by %s (%q): add one under testdata/decisions", name, id)
		}
	}
	doc := decisionsDoc(cases)
	const path = "../../docs/decisions.md"
	if *update {
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, doc) {
		t.Errorf("docs/decisions.md is out of date (%v): go test ./internal/gate -run TestGoldenDecisions -update", err)
	}
}

// decisionsDoc renders docs/decisions.md: for each row of the decision
// order, the rules that decided there (as observed), then every case.
func decisionsDoc(cases []goldenCase) []byte {
	byRow := map[int]map[string]map[Verdict]bool{}
	names := map[int][]string{}
	for _, c := range cases {
		n, name := 0, ""
		for _, s := range c.d.Steps {
			if s.Outcome == Decided {
				n, name = s.N, s.Name
			}
		}
		if byRow[n] == nil {
			byRow[n] = map[string]map[Verdict]bool{}
		}
		if byRow[n][c.d.Rule] == nil {
			byRow[n][c.d.Rule] = map[Verdict]bool{}
		}
		byRow[n][c.d.Rule][c.d.Verdict] = true
		if name != "" && !slices.Contains(names[n], name) {
			names[n] = append(names[n], name)
		}
	}
	var b bytes.Buffer
	b.WriteString(`# Decision catalogue

<!-- Generated by go test ./internal/gate -run TestGoldenDecisions -update
     from internal/gate/testdata/decisions/*.txtar, decided by the real gate.
     Do not edit: add or change a case there. -->

Every action (shell command, code run, file write, MCP tool call) goes
through one decision table, in this order (DESIGN.md, "Decision order";
[concepts](concepts.md) explains owners and modes). The first row that
decides ends it; a failure anywhere is a deny (rule ` + "`error`" + `).

| Row | What it checks | Rules that decide there | Verdicts |
|---|---|---|---|
`)
	rows := make([]int, 0, len(byRow))
	for n := range byRow {
		rows = append(rows, n)
	}
	sort.Ints(rows)
	for _, n := range rows {
		var ids []string
		verdicts := map[Verdict]bool{}
		for id, vs := range byRow[n] {
			ids = append(ids, "`"+id+"`")
			for v := range vs {
				verdicts[v] = true
			}
		}
		sort.Strings(ids)
		var vs []string
		for _, v := range []Verdict{Allow, Ask, Deny} {
			if verdicts[v] {
				vs = append(vs, string(v))
			}
		}
		row, what := strconv.Itoa(n), strings.Join(names[n], "; ")
		if n == 0 {
			row, what = "—", "outside the rows: no owner bound to the action, or an internal failure"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row, what, strings.Join(ids, ", "), strings.Join(vs, ", "))
	}
	b.WriteString(`
Under ` + "`steps`" + ` (` + "`warden check --json`" + `, the audit log) each row is ` + "`pass`" + `
(checked, did not decide), ` + "`skip`" + ` (does not apply to this owner or action)
or ` + "`decided`" + `.

Row 7 decides for owners nobody can answer for, from their mode. A kanban
run is one unless the operator set ` + "`approvals.kanban_mode: ask`" + `: then the
host attaches its web console to the run's owner as its answer channel,
and where ` + "`deny`" + ` would have denied, a human on the console is asked instead
(row 9; example 13). That is not a flag that makes the run look attended:
the channel is a live route the host holds, the worker can neither attach
nor see it, and without a console nothing is asked (deny at once), so no
question is ever parked where nobody can answer it (invariant 9).

## Examples

Each case is decided by the real gate in a test (` + "`internal/gate/testdata/decisions`" + `):
the owner (` + "`@SURFACE`" + ` marks an attended owner, one a human answers for), the
action, the verdict and the rule that gave it, and the path through the rows
(p pass, s skip, d decided).
`)
	file := ""
	for _, c := range cases {
		if c.file != file {
			file = c.file
			fmt.Fprintf(&b, "\n### %s\n\n%s\n\n| Owner | Action | Verdict | Rule | Rows |\n|---|---|---|---|---|\n", strings.ReplaceAll(file, "_", " "), c.about)
		}
		var path []string
		for _, s := range reached(c.d.Steps) {
			path = append(path, fmt.Sprintf("%d%c", s.N, s.Outcome[0]))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s` | %s |\n", c.owner, strings.ReplaceAll(c.act, "|", `\|`), c.d.Verdict, c.d.Rule, strings.Join(path, " "))
	}
	return b.Bytes()
}
