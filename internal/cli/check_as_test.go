package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/shell"
	render "github.com/wardenhq/warden/internal/surface/terminal"
)

// TestParseAsChannel checks which owners --as makes attended: the kinds
// a human can be behind get the simulated channel, the rest never do,
// and a lineage with an unattended owner stays unattended.
func TestParseAsChannel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		notation          string
		channel, attended bool
	}{
		{"cli", true, true},
		{"gateway:web/KEY", true, true},
		{"external:claude/s1", true, true},
		{"subagent:a1", true, true},
		{"cli>subagent:a1", true, true},
		{"cron:J1", false, false},
		{"kanban:T1", false, false},
		{"single_query", false, false},
		{"api", false, false},
		{"webhook", false, false},
		{"internal", false, false},
		{"kanban:T1>cron:J1", false, false},
		{"cli>cron:J1", false, false},
		{"cron:J1>subagent:a1", true, false},
		{"api>subagent:a1", true, false},
	}
	for _, tt := range tests {
		o, err := parseAs(tt.notation)
		if err != nil {
			t.Errorf("parseAs(%q): %v", tt.notation, err)
			continue
		}
		ch, ok := o.Channel()
		if ok != tt.channel || o.Attended() != tt.attended {
			t.Errorf("parseAs(%q): channel %v, attended %v; want %v, %v", tt.notation, ok, o.Attended(), tt.channel, tt.attended)
		}
		if ok && ch.Surface() != checkSurface {
			t.Errorf("parseAs(%q): surface %q, want %q", tt.notation, ch.Surface(), checkSurface)
		}
		if o.String() != strings.ReplaceAll(tt.notation, " ", "") {
			t.Errorf("parseAs(%q) prints as %q", tt.notation, o)
		}
	}
	for _, bad := range []string{"", "cron", "frob", "cli>", "gateway:web", "cli:x"} {
		if _, err := parseAs(bad); err == nil {
			t.Errorf("parseAs(%q) succeeded", bad)
		}
	}
}

// TestCheckJSONLAs checks "as" lines against a policy loaded once, and
// that without a policy an "as" line is an error line, never a decision.
func TestCheckJSONLAs(t *testing.T) {
	t.Parallel()
	rules, err := loadRules("", true, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"cmd":"rm -rf build","as":"cli"}` + "\n" +
		`{"cmd":"rm -rf build","as":"kanban:T1"}` + "\n" +
		`{"cmd":"ls","as":"cron:J1"}` + "\n" +
		`{"cmd":"ls","as":["cli"]}` + "\n"
	want := `{"cmd":"rm -rf build","verdict":"dangerous","classes":["delete.recursive","delete.force"],"decision":"ask","rule":"human"}` + "\n" +
		`{"cmd":"rm -rf build","verdict":"dangerous","classes":["delete.recursive","delete.force"],"decision":"deny","rule":"unattended.kanban_mode"}` + "\n" +
		`{"cmd":"ls","verdict":"safe","classes":[],"decision":"allow","rule":"safe"}` + "\n" +
		`{"error":"line 4: \"as\" must be a string, not array"}` + "\n"
	var out bytes.Buffer
	if err := checkJSONL(t.Context(), strings.NewReader(in), &out, rules, 0); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	if err := checkJSONL(t.Context(), strings.NewReader(`{"cmd":"ls","as":"cli"}`+"\n"), &out, nil, 0); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, `{"error":"line 1: decide: no policy loaded"}`) {
		t.Errorf("no policy: got %s", got)
	}
}

// TestWriteDecision checks the decision section of the human report with
// a hand-made decision: alignment, the deciding row's marker, and that
// text from the config or the command cannot act on the terminal.
func TestWriteDecision(t *testing.T) {
	t.Parallel()
	o, err := parseAs("cron:J1")
	if err != nil {
		t.Fatal(err)
	}
	a := &shell.Analysis{Input: "x", Verdict: shell.Safe}
	res := explain.Explanation{Cmd: "x", Analysis: a, Verdict: "safe", Decision: &explain.Decision{Owner: o, Decision: gate.Decision{
		Verdict: gate.Deny,
		Rule:    gate.RuleDenyRule,
		Steps: []gate.Step{
			{N: 1, Name: "parse and analyse", Outcome: gate.Pass, Detail: "1 commands"},
			{N: 3, Name: "user deny rules", Outcome: gate.Decided, Detail: "evil\x1b[2J*"},
			{N: 10, Name: "deny", Outcome: gate.NotReached},
		},
		AgentMessage: "blocked\u202e",
	}}}
	var b strings.Builder
	if err := render.WriteExplanation(&b, res, false); err != nil {
		t.Fatal(err)
	}
	want := `command: x
verdict: safe

as: cron:J1 (unattended: no answer channel)
decision: deny
rule: floor.deny_rule

decision path:
     1  parse and analyse  pass         1 commands
  →  3  user deny rules    decided      evil\x1b[2J*
    10  deny               not reached

agent message: blocked\u202e
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestAsReportShape checks the --as --json keys and their order: the
// check report's keys first, unchanged, then the decision's.
func TestAsReportShape(t *testing.T) {
	t.Parallel()
	rules, err := loadRules("", true, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseAs("cli")
	if err != nil {
		t.Fatal(err)
	}
	res, err := decideAs(t.Context(), rules, o, "rm -rf build")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, explain.JSON(res), true); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	want := "cmd input verdict classes findings commands dynamic error deny_rule as decision rule steps agent_message"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys:\n%s\nwant:\n%s", got, want)
	}
	if res.Verdict != "dangerous" || res.Decision.Verdict != gate.Ask || res.Decision.Owner.Kind() != owner.KindCLI {
		t.Errorf("verdict %q, decision %q", res.Verdict, res.Decision.Verdict)
	}
}
