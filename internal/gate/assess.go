package gate

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/shell"
)

// assessment is rows 1 to 4 for one action: what it is, whether a floor
// blocks it, whether it is dangerous at all.
type assessment struct {
	kind      action.Kind
	what      string // the action for people: a command, a path, a tool
	floor     string // rule id of a floor that denies, or ""
	detail    string
	denyRule  string
	dangerous bool
	safeRule  string
	classes   []string
	analysis  *shell.Analysis
	// shells are analyses whose findings grants must cover (shell
	// commands, commands found in code); classes outside them are
	// covered by class grants only.
	shells []*shell.Analysis
	extra  []string
	// exact is the action's exact-grant key (grant.ExactKey).
	exact string
}

// covered reports whether grants cover every finding and extra class.
func (as *assessment) covered(gs []grant.Grant, session string, now time.Time) ([]grant.Grant, bool) {
	if as.kind != action.Shell && as.exact != "" {
		if g, ok := grant.CoverExact(gs, as.exact, session, now); ok {
			return []grant.Grant{g}, true
		}
	}
	var used []grant.Grant
	for _, a := range as.shells {
		if len(a.Findings) == 0 {
			continue
		}
		u, ok := grant.Cover(gs, a, session, now)
		if !ok {
			return nil, false
		}
		used = append(used, u...)
	}
	if len(as.extra) > 0 {
		u, ok := grant.CoverClasses(gs, as.extra, session, now)
		if !ok {
			return nil, false
		}
		used = append(used, u...)
	}
	return used, len(used) > 0
}

// table records the path through the decision rows.
type table struct{ steps []Step }

func (t *table) add(n int, name, outcome, detail string) {
	t.steps = append(t.steps, Step{N: n, Name: name, Outcome: outcome, Detail: detail})
}

func (t *table) decision() Decision { return Decision{Steps: t.steps} }

// finish fills in the verdict, rule and messages.
func (t *table) finish(d Decision, v Verdict, rule, why string, as *assessment) Decision {
	d.Verdict, d.Rule = v, rule
	d.Steps = notReached(t.steps)
	d.DenyRule = as.denyRule
	d.HumanMessage = fmt.Sprintf("%s (%s): %s", v, rule, as.what)
	if len(as.classes) > 0 {
		d.HumanMessage += " — " + describe(as.classes)
	}
	if why != "" {
		d.HumanMessage += "; " + why
	}
	if v == Deny {
		d.AgentMessage = agentMessage(rule, why, as)
	}
	return d
}

// assess runs rows 1 to 3 (and the judgement behind row 4) for each
// action kind.
func (g *Gate) assess(p *Policy, act action.Action, t *table) (*assessment, error) {
	if err := act.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInternal, err)
	}
	switch act.Kind {
	case action.Shell:
		return p.assessShell(act.Command, "shell command", t), nil
	case action.Code:
		return p.assessCode(act, t), nil
	case action.Write:
		return p.assessWrite(act, t), nil
	case action.MCP:
		return p.assessTool(act, "mcp", act.Server+"/"+act.Tool, act.ReadOnly, t), nil
	case action.Plugin:
		as := p.assessTool(act, "plugin", act.Plugin+"/"+act.RuleKey, false, t)
		if act.Reason != "" {
			as.what += " (" + act.Reason + ")"
		}
		return as, nil
	}
	return nil, fmt.Errorf("%w: unknown action kind %q", ErrInternal, act.Kind)
}

func (p *Policy) assessShell(cmd, kind string, t *table) *assessment {
	a := p.Analyse(cmd)
	as := &assessment{kind: action.Shell, what: kind + " `" + oneLine(a.Input) + "`", analysis: a, classes: a.Classes(), shells: []*shell.Analysis{a}}
	p.floors(as, []*shell.Analysis{a}, nil, t)
	return as
}

// floors runs rows 1 to 3 over one or more analyses (a code action may
// hold several commands) and extra deny-rule subjects.
func (p *Policy) floors(as *assessment, list []*shell.Analysis, extraSubjects []string, t *table) {
	var parsed []string
	for _, a := range list {
		if a.Verdict == shell.Malformed {
			t.add(1, "parse and analyse", Decided, a.Error)
			as.floor, as.detail = RuleMalformed, a.Error
			return
		}
		parsed = append(parsed, plural(len(a.Commands), "command"))
	}
	t.add(1, "parse and analyse", Pass, strings.Join(parsed, "; "))
	for _, a := range list {
		if a.Verdict == shell.Hardline {
			var hard []string
			for _, f := range a.Findings {
				if f.Tier == shell.TierHardline {
					hard = append(hard, f.Description)
				}
			}
			t.add(2, "hardline floor", Decided, strings.Join(unique(hard), ", "))
			as.floor, as.detail = RuleHardline, strings.Join(unique(hard), ", ")
			return
		}
	}
	t.add(2, "hardline floor", Pass, "")
	subjects := extraSubjects
	for _, a := range list {
		subjects = append(subjects, a.Projections()...)
	}
	if glob, ok := p.deny.Match(subjects); ok {
		t.add(3, "user deny rules", Decided, glob)
		as.floor, as.denyRule = RuleDenyRule, glob
		return
	}
	t.add(3, "user deny rules", Pass, "")
	for _, a := range list {
		if a.Verdict == shell.Dangerous {
			as.dangerous = true
		}
	}
}

func (p *Policy) assessCode(act action.Action, t *table) *assessment {
	lang := strings.ToLower(strings.TrimSpace(act.Language))
	switch lang {
	case "sh", "bash", "shell", "zsh", "dash", "ksh":
		as := p.assessShell(act.Source, lang+" script", t)
		as.kind = action.Code
		return as
	}
	var list []*shell.Analysis
	for _, cmd := range spawnedCommands(lang, act.Source) {
		list = append(list, p.Analyse(cmd))
	}
	as := &assessment{kind: action.Code, what: lang + " code (" + fmt.Sprint(len(act.Source)) + " bytes)", shells: list, extra: []string{ClassCode}}
	for _, a := range list {
		as.classes = append(as.classes, a.Classes()...)
	}
	as.classes = unique(append(as.classes, ClassCode))
	if len(list) > 0 {
		as.analysis = list[0]
	}
	// Deny rules see each line of the source too: a rule for `curl` must
	// not be dodged by wrapping it in os.system.
	var lines []string
	for _, l := range strings.Split(act.Source, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	p.floors(as, list, lines, t)
	as.dangerous = true // code is arbitrary execution
	return as
}

// Classes the gate adds for actions that are not shell commands.
const (
	ClassCode      = "code.exec"
	ClassWrite     = "write.file"
	classMCPPrefix = "mcp."
	classPlugin    = "plugin."
)

func (p *Policy) assessWrite(act action.Action, t *table) *assessment {
	target := p.expand(act.Path)
	if !path.IsAbs(target) && act.Dir != "" {
		target = path.Join(p.expand(act.Dir), target)
	}
	target = path.Clean(target)
	as := &assessment{kind: action.Write, what: "write " + target}
	t.add(1, "parse and analyse", Pass, target)
	class := p.analyser.WriteClass(target)
	if class != "" {
		as.classes = []string{class}
	}
	switch class {
	case "warden.self_access", "disk.write_device":
		t.add(2, "hardline floor", Decided, describe(as.classes))
		as.floor, as.detail = RuleHardline, describe(as.classes)
		return as
	}
	t.add(2, "hardline floor", Pass, "")
	switch class {
	case "write.credentials", "write.shell_rc", "write.env_file":
		t.add(3, "protected paths", Decided, describe(as.classes))
		as.floor, as.detail = RuleProtectedPath, describe(as.classes)
		return as
	}
	for _, gl := range p.protected {
		if gl.Match(target) {
			t.add(3, "protected paths", Decided, gl.String())
			as.floor, as.detail = RuleProtectedPath, "write.protected "+gl.String()
			return as
		}
	}
	if len(p.safeRoots) > 0 && !under(target, p.safeRoots) {
		t.add(3, "protected paths", Decided, "outside write.safe_roots")
		as.floor, as.detail = RuleOutsideRoots, "outside the allowed directories"
		return as
	}
	if glob, ok := p.deny.Match([]string{"write " + target}); ok {
		t.add(3, "user deny rules", Decided, glob)
		as.floor, as.denyRule = RuleDenyRule, glob
		return as
	}
	t.add(3, "protected paths and deny rules", Pass, "")
	if class != "" {
		as.dangerous, as.extra = true, as.classes
	}
	return as
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// assessTool handles MCP tools and plugin actions: rules by
// "server/tool" glob, first match wins; without a rule a read-only tool
// runs and anything else asks.
func (p *Policy) assessTool(act action.Action, kind, name string, readOnly bool, t *table) *assessment {
	class := classMCPPrefix + name
	if kind == "plugin" {
		class = classPlugin + name
	}
	as := &assessment{kind: act.Kind, what: kind + " " + name, classes: []string{class}, extra: []string{class}}
	t.add(1, "parse and analyse", Pass, name)
	t.add(2, "hardline floor", Pass, "")
	for _, r := range p.tools {
		if !r.glob.Match(name) {
			continue
		}
		switch r.verdict {
		case policy.Deny:
			t.add(3, "tool rules", Decided, "deny "+r.glob.String())
			as.floor, as.denyRule = RuleDenyRule, r.glob.String()
			return as
		case policy.Allow:
			t.add(3, "tool rules", Pass, "allow "+r.glob.String())
			as.safeRule = RuleToolAllow
			return as
		}
		t.add(3, "tool rules", Pass, "ask "+r.glob.String())
		as.dangerous = true
		return as
	}
	if glob, ok := p.deny.Match([]string{kind + " " + name}); ok {
		t.add(3, "user deny rules", Decided, glob)
		as.floor, as.denyRule = RuleDenyRule, glob
		return as
	}
	t.add(3, "tool rules", Pass, "no rule")
	as.dangerous = !readOnly
	return as
}

func describe(classes []string) string {
	out := make([]string, 0, len(classes))
	for _, k := range classes {
		if c, ok := shell.Lookup(k); ok {
			out = append(out, c.Description+" ["+k+"]")
			continue
		}
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

func unique(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// rows names DESIGN.md's decision rows.
var rows = [...]string{1: "parse and analyse", 2: "hardline floor", 3: "user deny rules", 4: "not dangerous", 5: "bypasses", 6: "grants", 7: "unattended mode", 8: "guardian", 9: "ask a human", 10: "deny"}

// NotReached marks rows after the deciding one.
const NotReached = "not reached"

// notReached completes a path with the rows after the deciding one, so
// every row of the table is shown.
func notReached(steps []Step) []Step {
	last := 0
	if len(steps) > 0 {
		last = steps[len(steps)-1].N
	}
	for n := last + 1; n < len(rows); n++ {
		steps = append(steps, Step{N: n, Name: rows[n], Outcome: NotReached})
	}
	return steps
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Rows returns the names of DESIGN.md's decision rows, 1 to 10.
func Rows() []string { return append([]string(nil), rows[1:]...) }
