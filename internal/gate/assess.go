package gate

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/codescan"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/reads"
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
	// opaque says what the analyser could not see into (code it could
	// not read completely). Such an action is never allowed by a bypass
	// (yolo, mode off): DESIGN invariant 12.
	opaque string
}

// shellAssessment is an assessment of one shell command with room for its
// one analysis: one allocation instead of two.
type shellAssessment struct {
	assessment
	one [1]*shell.Analysis
	cls [2]string
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
	// One buffer: the message is built once, its classes' descriptions
	// written into it.
	var b strings.Builder
	b.Grow(len(v) + len(rule) + len(as.what) + len(why) + 8 + 96*len(as.classes))
	b.WriteString(string(v))
	b.WriteString(" (")
	b.WriteString(rule)
	b.WriteString("): ")
	b.WriteString(as.what)
	if len(as.classes) > 0 {
		b.WriteString(" — ")
		writeDescription(&b, as.classes)
	}
	if why != "" {
		b.WriteString("; ")
		b.WriteString(why)
	}
	d.HumanMessage = b.String()
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
		return p.assessShell(act.Command, act.Dir, "shell command", t), nil
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

func (p *Policy) assessShell(cmd, dir, kind string, t *table) *assessment {
	a := p.AnalyseIn(cmd, dir)
	// The command as it will run, what could hide or disguise itself
	// escaped (\u00a0), never a cleaned-up reading.
	as := &shellAssessment{assessment: assessment{kind: action.Shell, what: kind + " `" + oneLine(shell.Visible(a.Input)) + "`", analysis: a}}
	if cls := a.AppendClasses(as.cls[:0]); len(cls) > 0 {
		as.classes = cls[:len(cls):len(cls)]
	}
	as.one[0] = a
	as.shells = as.one[:]
	p.floors(&as.assessment, as.shells, nil, dir, t)
	return &as.assessment
}

// floors runs rows 1 to 3 over one or more analyses (a code action may
// hold several commands) and extra deny-rule subjects; dir is where
// they run, for the protected-path table.
func (p *Policy) floors(as *assessment, list []*shell.Analysis, extraSubjects []string, dir string, t *table) {
	for _, a := range list {
		if a.Verdict == shell.Malformed {
			t.add(1, "parse and analyse", Decided, a.Error)
			as.floor, as.detail = RuleMalformed, a.Error
			return
		}
	}
	if len(list) == 1 {
		t.add(1, "parse and analyse", Pass, plural(len(list[0].Commands), "command"))
	} else {
		parsed := make([]string, 0, len(list))
		for _, a := range list {
			parsed = append(parsed, plural(len(a.Commands), "command"))
		}
		t.add(1, "parse and analyse", Pass, strings.Join(parsed, "; "))
	}
	// Row 2 and the protected paths of row 3: the analyser's hardline
	// classes, and what its writers reach in the protected-path table
	// (the same table the write tool is judged by), in every mode.
	var hard, floor []string
	for _, a := range list {
		for _, f := range a.Findings {
			switch f.Tier {
			case shell.TierHardline:
				hard = append(hard, f.Description)
			case shell.TierFloor:
				floor = append(floor, f.Description+" ["+f.Class+"]")
			}
		}
	}
	if len(hard) > 0 {
		t.add(2, "hardline floor", Decided, strings.Join(unique(hard), ", "))
		as.floor, as.detail = RuleHardline, strings.Join(unique(hard), ", ")
		return
	}
	t.add(2, "hardline floor", Pass, "")
	if len(floor) > 0 {
		t.add(3, "protected paths", Decided, strings.Join(unique(floor), ", "))
		as.floor, as.detail = RuleProtectedPath, strings.Join(unique(floor), ", ")
		return
	}
	for _, a := range list {
		if a.Opaque() && as.opaque == "" {
			as.opaque = opaqueReasons(a)
		}
	}
	if glob, ok := p.denyMatch(list, extraSubjects); ok {
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

// denyMatch matches the user deny rules against the extra subjects and
// the projections of each analysis; without deny rules it builds none.
func (p *Policy) denyMatch(list []*shell.Analysis, extraSubjects []string) (string, bool) {
	if p.deny.Len() == 0 {
		return "", false
	}
	if len(list) == 1 && len(extraSubjects) == 0 {
		var buf [8]string
		return p.deny.Match(list[0].AppendProjections(buf[:0]))
	}
	subjects := extraSubjects
	for _, a := range list {
		subjects = append(subjects, a.Projections()...)
	}
	return p.deny.Match(subjects)
}

// opaqueReasons says what the analyser could not see into.
func opaqueReasons(a *shell.Analysis) string {
	var out []string
	for _, f := range a.Findings {
		if !f.Opaque {
			continue
		}
		r := f.Description
		if f.Detail != "" {
			r += ": " + f.Detail
		}
		out = append(out, r)
	}
	return strings.Join(unique(out), "; ")
}

// assessCode judges code by what it does (internal/codescan): the
// commands equivalent to its spawns and file and network operations go
// through the shell analyser and the protected-path table as one
// script, so the same effect gets the same verdict as a shell command,
// and python -c and the code tool agree. Code that is complete and does
// nothing dangerous is safe; code the analyser could not read entirely
// is dangerous and opaque (no bypass lets it through: invariant 12).
func (p *Policy) assessCode(act action.Action, t *table) *assessment {
	lang, ok := codescan.Language(act.Language)
	if ok && lang == codescan.Shell {
		as := p.assessShell(act.Source, act.Dir, strings.ToLower(strings.TrimSpace(act.Language))+" script", t)
		as.kind = action.Code
		return as
	}
	r := codescan.Analyze(act.Language, act.Source)
	as := &assessment{kind: action.Code, what: act.Language + " code (" + fmt.Sprint(len(act.Source)) + " bytes)"}
	if !ok {
		t.add(1, "parse and analyse", Decided, "unknown language "+act.Language)
		as.floor, as.detail = RuleMalformed, "warden cannot run or read "+act.Language+" code"
		return as
	}
	var list []*shell.Analysis
	if len(r.Commands) > 0 {
		// One script, so a cd in the code moves what follows.
		a := p.AnalyseIn(strings.Join(r.Commands, "\n"), act.Dir)
		list = append(list, a)
		as.analysis = a
		as.classes = append(as.classes, a.Classes()...)
	}
	as.shells = list
	for _, f := range r.Findings {
		as.classes = append(as.classes, f.Class)
		as.extra = append(as.extra, f.Class)
	}
	if !r.Complete {
		as.opaque = strings.Join(r.Reasons, "; ")
		as.classes = append(as.classes, ClassCode)
		as.extra = append(as.extra, ClassCode)
	}
	as.classes = unique(as.classes)
	// Deny rules see each line of the source too: a rule for `curl` must
	// not be dodged by wrapping it in os.system.
	var lines []string
	for _, l := range strings.Split(act.Source, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	p.floors(as, list, lines, act.Dir, t)
	if as.floor != "" {
		return as
	}
	// Reading a secret is at least dangerous (what the code reads, it
	// can print into the agent's context); warden's own files are
	// hardline.
	if rj := p.JudgeRead(act.Dir, r.Reads, nil); rj.Match.Protected() {
		as.classes = unique(append(as.classes, rj.Match.Class))
		if rj.Match.Tier == protect.Hardline {
			t.add(2, "hardline floor", Decided, describe([]string{rj.Match.Class}))
			as.floor, as.detail = RuleHardline, describe([]string{rj.Match.Class})
			return as
		}
		as.dangerous = true
		as.extra = append(as.extra, rj.Match.Class)
	}
	if !r.Complete || len(r.Findings) > 0 {
		as.dangerous = true
	}
	return as
}

// Classes the gate adds for actions that are not shell commands.
const (
	ClassCode  = "code.exec"
	ClassWrite = "write.file"
	// ClassHardlink is a write to a file with several hard links.
	ClassHardlink  = "write.hardlink"
	classMCPPrefix = "mcp."
	classPlugin    = "plugin."
)

func (p *Policy) assessWrite(act action.Action, t *table) *assessment {
	dir := act.Dir
	if dir != "" {
		dir = path.Clean(p.expand(dir))
	}
	// Every path the write can reach: the name as given (~, relative to
	// the action's directory, .. cleaned) and where symlinks of existing
	// components lead. A link named notes.txt that points at ~/.bashrc is
	// a write to ~/.bashrc.
	cands := protect.Resolve(p.resolveEnv(dir), p.expand(act.Path))
	target := cands[0]
	as := &assessment{kind: action.Write, what: "write " + target}
	if len(cands) > 1 {
		as.what += " (reaches " + strings.Join(cands[1:], ", ") + ")"
	}
	t.add(1, "parse and analyse", Pass, strings.Join(cands, ", "))
	m := p.table.MatchAll(cands, protect.Write)
	if m.Protected() {
		as.classes = []string{m.Class}
	}
	if p.writeFloor(as, m, t) {
		return as
	}
	for _, c := range cands {
		for _, gl := range p.protected {
			if gl.Match(c) {
				t.add(3, "protected paths", Decided, gl.String())
				as.floor, as.detail = RuleProtectedPath, "write.protected "+gl.String()
				return as
			}
		}
		if len(p.safeRoots) > 0 && !under(c, p.safeRoots) {
			t.add(3, "protected paths", Decided, "outside write.safe_roots")
			as.floor, as.detail = RuleOutsideRoots, "outside the allowed directories"
			return as
		}
	}
	var subjects []string
	for _, c := range cands {
		subjects = append(subjects, "write "+c)
	}
	if glob, ok := p.deny.Match(subjects); ok {
		t.add(3, "user deny rules", Decided, glob)
		as.floor, as.denyRule = RuleDenyRule, glob
		return as
	}
	t.add(3, "protected paths and deny rules", Pass, "")
	if m.Tier == protect.Dangerous {
		as.dangerous, as.extra = true, as.classes
	}
	// A file with several hard links is also every other name of it,
	// which no resolution can list: not plainly safe, and no bypass
	// lets it through (invariant 12). (The write tool replaces the file
	// instead of writing into it; other writers do not.)
	if n := protect.Hardlinks(p.fs, cands[len(cands)-1]); n > 1 {
		as.classes = unique(append(as.classes, ClassHardlink))
		as.extra = append(as.extra, ClassHardlink)
		as.dangerous = true
		as.opaque = fmt.Sprintf("%s has %d hard links; any of them may be a protected file", cands[len(cands)-1], n)
	}
	return as
}

// writeFloor applies rows 2 and 3 for a protected-table match: hardline
// and floor targets are denied whichever writer reaches them.
func (p *Policy) writeFloor(as *assessment, m protect.Match, t *table) bool {
	switch m.Tier {
	case protect.Hardline:
		t.add(2, "hardline floor", Decided, describe(as.classes))
		as.floor, as.detail = RuleHardline, describe(as.classes)
		return true
	case protect.Floor:
		t.add(2, "hardline floor", Pass, "")
		t.add(3, "protected paths", Decided, describe(as.classes))
		as.floor, as.detail = RuleProtectedPath, describe(as.classes)
		return true
	}
	t.add(2, "hardline floor", Pass, "")
	return false
}

// ReadJudgement is how reading some paths is judged (internal/reads).
type ReadJudgement = reads.Judgement

// JudgeRead judges reading paths and shell globs named from dir (a
// hook's Read, Grep and Glob): see reads.Judge.Judge.
func (p *Policy) JudgeRead(dir string, paths, globs []string) ReadJudgement {
	return p.reads.Judge(dir, paths, globs)
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
	// A tool's arguments may name paths; warden's own files are out of
	// reach whatever the tool does with them, however it is allowed
	// (a read-only hint, a rule), and a secret is never read unasked.
	m, named, complete := p.argPaths(act.Args)
	if !complete {
		// Too many strings to judge, or arguments that are not JSON:
		// what they name is unknown, so no hint or rule runs it
		// unasked.
		readOnly = false
		as.dangerous = true
	}
	if m.Protected() {
		as.classes = append(as.classes, m.Class)
		if m.Tier == protect.Hardline {
			t.add(2, "hardline floor", Decided, describe([]string{m.Class})+" ("+named+")")
			as.floor, as.detail = RuleHardline, describe([]string{m.Class})+": "+named
			return as
		}
		readOnly = false
	}
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

// maxArgPaths bounds the strings of a tool's arguments judged as paths.
const maxArgPaths = 256

// argPaths judges the strings of a tool's JSON arguments (values and
// keys) that name a path (absolute, home-relative or a file:// URL)
// against the protected table, for reading and for writing (what the
// tool does with them is unknown): the gravest match, the path that
// matched, and whether every string was judged (false past
// maxArgPaths, or for arguments that are not JSON).
func (p *Policy) argPaths(args json.RawMessage) (protect.Match, string, bool) {
	var best protect.Match
	var named string
	if len(args) == 0 {
		return best, "", true
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return best, "", false
	}
	n := 0
	judge := func(s string) {
		if len(s) > 7 && strings.EqualFold(s[:7], "file://") {
			s = strings.TrimPrefix(s[7:], "localhost")
		}
		if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~") {
			return
		}
		n++
		if n > maxArgPaths {
			return
		}
		cands := protect.Resolve(p.resolveEnv(""), p.expand(s))
		// Reading names what is at stake (a key read); a write match
		// counts where reading is not protected, or where writing is
		// hardline (a raw disk).
		m := p.table.MatchAll(cands, protect.Read)
		if w := p.table.MatchAll(cands, protect.Write); !m.Protected() && w.Protected() || w.Tier == protect.Hardline && m.Tier != protect.Hardline {
			m = w
		}
		if m.Tier > best.Tier {
			best, named = m, s
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				judge(k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			judge(v)
		}
	}
	walk(v)
	return best, named, n <= maxArgPaths
}

func describe(classes []string) string {
	var b strings.Builder
	writeDescription(&b, classes)
	return b.String()
}

// writeDescription writes each class's description and key, comma
// separated ("…description [key], …"; a class of neither catalogue by its
// key alone).
func writeDescription(b *strings.Builder, classes []string) {
	for i, k := range classes {
		if i > 0 {
			b.WriteString(", ")
		}
		desc := ""
		if c, ok := shell.Lookup(k); ok {
			desc = c.Description
		} else if c, ok := protect.Lookup(k); ok {
			desc = c.Description
		} else {
			b.WriteString(k)
			continue
		}
		b.WriteString(desc)
		b.WriteString(" [")
		b.WriteString(k)
		b.WriteString("]")
	}
}

func unique(s []string) []string {
	if len(s) < 2 {
		return s
	}
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
	s = shell.CollapseFields(s)
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
	if what == "command" && n < len(commandCounts) {
		return commandCounts[n] // the commonest row-1 details, without building them
	}
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

var commandCounts = [...]string{"0 commands", "1 command", "2 commands", "3 commands", "4 commands"}

// Rows returns the names of DESIGN.md's decision rows, 1 to 10.
func Rows() []string { return append([]string(nil), rows[1:]...) }
