package cli

import (
	"encoding/json"
	"io"

	"github.com/wardenhq/warden/internal/shell"
)

// The JSON shapes below are a documented interface (docs/check.md, "warden
// check --json"): they are declared here rather than reusing the shell
// package's struct tags so that the analyser can evolve without silently
// changing what scripts parse. Every key is always present; slices are
// [] rather than null, and absent strings are null (so jq's truthiness
// works on them).

// checkReport is the output of warden check --json.
type checkReport struct {
	Cmd      string        `json:"cmd"`
	Input    string        `json:"input"`
	Verdict  string        `json:"verdict"`
	Classes  []classJSON   `json:"classes"`
	Findings []findingJSON `json:"findings"`
	Commands []commandJSON `json:"commands"`
	Dynamic  bool          `json:"dynamic"`
	Error    *string       `json:"error"`
	DenyRule *string       `json:"deny_rule"`
}

// checkAsReport is the output of warden check --as --json: the check
// report unchanged (its "verdict" is still the analysis verdict), then
// the gate's decision for the owner.
type checkAsReport struct {
	checkReport
	// As is the owner, in the notation (canonical form of --as).
	As string `json:"as"`
	// Decision is the gate's verdict: allow, ask or deny.
	Decision string `json:"decision"`
	// Rule is the stable id of the row that decided (floor.hardline,
	// human, unattended.cron_mode, …).
	Rule string `json:"rule"`
	// Steps are the rows of the decision table, in order.
	Steps []stepJSON `json:"steps"`
	// AgentMessage is what the agent would be told: set for deny, null
	// otherwise.
	AgentMessage *string `json:"agent_message"`
}

// stepJSON is one row of the decision path.
type stepJSON struct {
	N    int    `json:"n"`
	Name string `json:"name"`
	// Outcome is pass, skip, decided or "not reached".
	Outcome string  `json:"outcome"`
	Detail  *string `json:"detail"`
}

type classJSON struct {
	Key         string `json:"key"`
	Tier        string `json:"tier"`
	Description string `json:"description"`
}

type spanJSON struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

type findingJSON struct {
	Class       string `json:"class"`
	Tier        string `json:"tier"`
	Description string `json:"description"`
	// Command indexes commands; null for structural findings (a pipeline,
	// a fork bomb) that belong to no single command.
	Command *int     `json:"command"`
	Span    spanJSON `json:"span"`
	// Text is input[span.start:span.end], so consumers need not slice
	// bytes themselves.
	Text string `json:"text"`
}

type argJSON struct {
	Value  string   `json:"value"`
	Static bool     `json:"static"`
	Glob   bool     `json:"glob"`
	Span   spanJSON `json:"span"`
}

type redirJSON struct {
	Op     string  `json:"op"`
	Target argJSON `json:"target"`
}

type commandJSON struct {
	Argv    []argJSON   `json:"argv"`
	Via     []string    `json:"via"`
	Assigns []string    `json:"assigns"`
	Redirs  []redirJSON `json:"redirs"`
	Span    spanJSON    `json:"span"`
}

// jsonlResult is one output line of warden check --jsonl for a good input
// line.
type jsonlResult struct {
	Cmd      string   `json:"cmd"`
	Verdict  string   `json:"verdict"`
	Classes  []string `json:"classes"`
	DenyRule string   `json:"deny_rule,omitempty"`
	// Decision and Rule are set for a line with "as".
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
}

// jsonlError is the output line for a bad input line.
type jsonlError struct {
	Error string `json:"error"`
}

// catalogueJSON is the output of warden check --catalogue --json.
type catalogueJSON struct {
	Classes []classJSON `json:"classes"`
}

func newReport(res checkResult) checkReport {
	a := res.analysis
	r := checkReport{
		Cmd:      res.cmd,
		Input:    a.Input,
		Verdict:  res.verdict,
		Classes:  []classJSON{},
		Findings: make([]findingJSON, 0, len(a.Findings)),
		Commands: make([]commandJSON, 0, len(a.Commands)),
		Dynamic:  a.Dynamic,
	}
	for _, c := range classesOf(a) {
		r.Classes = append(r.Classes, classJSON{Key: c.Key, Tier: string(c.Tier), Description: c.Description})
	}
	for _, f := range a.Findings {
		fj := findingJSON{
			Class:       f.Class,
			Tier:        string(f.Tier),
			Description: f.Description,
			Span:        spanJSON(f.Span),
			Text:        spanText(a.Input, f.Span),
		}
		if f.Command >= 0 && f.Command < len(a.Commands) {
			fj.Command = new(f.Command)
		}
		r.Findings = append(r.Findings, fj)
	}
	for _, c := range a.Commands {
		cj := commandJSON{
			Argv:    make([]argJSON, 0, len(c.Argv)),
			Via:     nonNil(c.Via),
			Assigns: nonNil(c.Assigns),
			Redirs:  make([]redirJSON, 0, len(c.Redirs)),
			Span:    spanJSON(c.Span),
		}
		for _, arg := range c.Argv {
			cj.Argv = append(cj.Argv, newArgJSON(arg))
		}
		for _, rd := range c.Redirs {
			cj.Redirs = append(cj.Redirs, redirJSON{Op: rd.Op, Target: newArgJSON(rd.Target)})
		}
		r.Commands = append(r.Commands, cj)
	}
	if a.Error != "" {
		r.Error = new(a.Error)
	}
	if res.denyRule != "" {
		r.DenyRule = new(res.denyRule)
	}
	return r
}

func newArgJSON(a shell.Arg) argJSON {
	return argJSON{Value: a.Value, Static: a.Static, Glob: a.Glob, Span: spanJSON(a.Span)}
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
	start, end := clampSpan(len(input), sp)
	return input[start:end]
}

func clampSpan(n int, sp shell.Span) (start, end int) {
	start, end = min(max(sp.Start, 0), n), min(max(sp.End, 0), n)
	return start, max(start, end)
}

// newAsReport is the --as --json report for res, which must hold a
// decision.
func newAsReport(res checkResult) checkAsReport {
	d := res.as.decision
	r := checkAsReport{
		checkReport: newReport(res),
		As:          res.as.owner.String(),
		Decision:    string(d.Verdict),
		Rule:        d.Rule,
		Steps:       make([]stepJSON, 0, len(d.Steps)),
	}
	for _, s := range d.Steps {
		sj := stepJSON{N: s.N, Name: s.Name, Outcome: s.Outcome}
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

// writeCheckJSON prints the --json report, with the decision under --as.
func writeCheckJSON(w io.Writer, res checkResult) error {
	if res.as != nil {
		return writeJSON(w, newAsReport(res), true)
	}
	return writeJSON(w, newReport(res), true)
}

// writeJSON encodes v without HTML escaping: commands are full of & < >,
// and \u0026 in place of && helps nobody reading the output.
func writeJSON(w io.Writer, v any, indent bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}
