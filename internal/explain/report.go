package explain

import "github.com/wardenhq/warden/internal/shell"

// The JSON shapes below are a documented interface (docs/check.md, "warden
// check --json"): they are declared here rather than reusing the shell
// package's struct tags so that the analyser can evolve without silently
// changing what scripts parse. Every key is always present; slices are
// [] rather than null, and absent strings are null (so jq's truthiness
// works on them).

// Report is the output of warden check --json.
type Report struct {
	Cmd      string          `json:"cmd"`
	Input    string          `json:"input"`
	Verdict  string          `json:"verdict"`
	Classes  []ClassReport   `json:"classes"`
	Findings []FindingReport `json:"findings"`
	Commands []CommandReport `json:"commands"`
	Dynamic  bool            `json:"dynamic"`
	Error    *string         `json:"error"`
	DenyRule *string         `json:"deny_rule"`
}

// DecisionReport is the output of warden check --as --json: the check
// report unchanged (its "verdict" is still the analysis verdict), then
// the gate's decision for the owner.
type DecisionReport struct {
	Report
	// As is the owner, in the notation (canonical form of --as).
	As string `json:"as"`
	// Decision is the gate's verdict: allow, ask or deny.
	Decision string `json:"decision"`
	// Rule is the stable id of the row that decided (floor.hardline,
	// human, unattended.cron_mode, …).
	Rule string `json:"rule"`
	// Steps are the rows of the decision table, in order.
	Steps []StepReport `json:"steps"`
	// AgentMessage is what the agent would be told: set for deny, null
	// otherwise.
	AgentMessage *string `json:"agent_message"`
}

// StepReport is one row of the decision path.
type StepReport struct {
	N    int    `json:"n"`
	Name string `json:"name"`
	// Outcome is pass, skip, decided or "not reached".
	Outcome string  `json:"outcome"`
	Detail  *string `json:"detail"`
}

// ClassReport is one class of the catalogue.
type ClassReport struct {
	Key         string `json:"key"`
	Tier        string `json:"tier"`
	Description string `json:"description"`
}

// SpanReport is a byte range [start, end) of the input.
type SpanReport struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// FindingReport is one finding of the analysis.
type FindingReport struct {
	Class       string `json:"class"`
	Tier        string `json:"tier"`
	Description string `json:"description"`
	// Command indexes commands; null for structural findings (a pipeline,
	// a fork bomb) that belong to no single command.
	Command *int       `json:"command"`
	Span    SpanReport `json:"span"`
	// Text is input[span.start:span.end], so consumers need not slice
	// bytes themselves.
	Text string `json:"text"`
}

// ArgReport is one word of a command.
type ArgReport struct {
	Value  string     `json:"value"`
	Static bool       `json:"static"`
	Glob   bool       `json:"glob"`
	Span   SpanReport `json:"span"`
}

// RedirReport is one redirection of a command.
type RedirReport struct {
	Op     string    `json:"op"`
	Target ArgReport `json:"target"`
}

// CommandReport is one command the line would execute.
type CommandReport struct {
	Argv    []ArgReport   `json:"argv"`
	Via     []string      `json:"via"`
	Assigns []string      `json:"assigns"`
	Redirs  []RedirReport `json:"redirs"`
	Span    SpanReport    `json:"span"`
}

// NewReport is the check report of e.
func NewReport(e Explanation) Report {
	a := e.Analysis
	r := Report{
		Cmd:      e.Cmd,
		Input:    a.Input,
		Verdict:  e.Verdict,
		Classes:  []ClassReport{},
		Findings: make([]FindingReport, 0, len(a.Findings)),
		Commands: make([]CommandReport, 0, len(a.Commands)),
		Dynamic:  a.Dynamic,
	}
	for _, c := range e.Classes() {
		r.Classes = append(r.Classes, ClassReport{Key: c.Key, Tier: string(c.Tier), Description: c.Description})
	}
	for _, f := range a.Findings {
		fj := FindingReport{
			Class:       f.Class,
			Tier:        string(f.Tier),
			Description: f.Description,
			Span:        SpanReport(f.Span),
			Text:        spanText(a.Input, f.Span),
		}
		if f.Command >= 0 && f.Command < len(a.Commands) {
			fj.Command = new(f.Command)
		}
		r.Findings = append(r.Findings, fj)
	}
	for _, c := range a.Commands {
		cj := CommandReport{
			Argv:    make([]ArgReport, 0, len(c.Argv)),
			Via:     nonNil(c.Via),
			Assigns: nonNil(c.Assigns),
			Redirs:  make([]RedirReport, 0, len(c.Redirs)),
			Span:    SpanReport(c.Span),
		}
		for _, arg := range c.Argv {
			cj.Argv = append(cj.Argv, newArgReport(arg))
		}
		for _, rd := range c.Redirs {
			cj.Redirs = append(cj.Redirs, RedirReport{Op: rd.Op, Target: newArgReport(rd.Target)})
		}
		r.Commands = append(r.Commands, cj)
	}
	if a.Error != "" {
		r.Error = new(a.Error)
	}
	if e.DenyRule != "" {
		r.DenyRule = new(e.DenyRule)
	}
	return r
}

func newArgReport(a shell.Arg) ArgReport {
	return ArgReport{Value: a.Value, Static: a.Static, Glob: a.Glob, Span: SpanReport(a.Span)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// spanText is the text of sp in input, clamped so that a bad span from
// the analyser cannot panic the report.
func spanText(input string, sp shell.Span) string {
	start, end := ClampSpan(len(input), sp)
	return input[start:end]
}

// ClampSpan is sp within [0, n], never inverted: a bad span from the
// analyser must not panic a report.
func ClampSpan(n int, sp shell.Span) (start, end int) {
	start, end = min(max(sp.Start, 0), n), min(max(sp.End, 0), n)
	return start, max(start, end)
}

// NewDecisionReport is the --as --json report of e, which must hold a
// decision.
func NewDecisionReport(e Explanation) DecisionReport {
	d := e.Decision
	r := DecisionReport{
		Report:   NewReport(e),
		As:       d.Owner.String(),
		Decision: string(d.Verdict),
		Rule:     d.Rule,
		Steps:    make([]StepReport, 0, len(d.Steps)),
	}
	for _, s := range d.Steps {
		sj := StepReport{N: s.N, Name: s.Name, Outcome: s.Outcome}
		if s.Detail != "" {
			sj.Detail = new(s.Detail)
		}
		r.Steps = append(r.Steps, sj)
	}
	if d.AgentMessage != "" {
		r.AgentMessage = new(d.AgentMessage)
	}
	return r
}

// JSON is the report of e as warden check --json prints it: a
// DecisionReport when the gate decided, else a Report.
func JSON(e Explanation) any {
	if e.Decision != nil {
		return NewDecisionReport(e)
	}
	return NewReport(e)
}
