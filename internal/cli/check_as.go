package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
)

// ownerForms lists the notations --as and a --jsonl "as" accept, for
// error messages (the full grammar is in internal/owner).
const ownerForms = "cli, single_query, gateway:PLATFORM/CHAT[/USER], cron:JOB, kanban:TASK, " +
	"api, webhook, subagent[:ID], external:AGENT[/SESSION], internal; " +
	"a lineage is written parent first, e.g. kanban:T1>cron:J1"

// checkSurface is the surface name of the answer channel --as simulates.
const checkSurface = "check"

// checkChannel is the answer channel --as attaches to the owner kinds a
// human can be behind. A real channel (a terminal prompt, a chat, the
// web console) exists only inside the host; this one only names a
// surface so that the gate takes the path it would take for a live
// session. warden check never asks anyone.
type checkChannel struct{}

// Surface implements owner.AnswerChannel.
func (checkChannel) Surface() string { return checkSurface }

// asResult is the gate's decision for one owner.
type asResult struct {
	owner    owner.Owner
	decision gate.Decision
}

// parseAs reads an owner notation and attaches the simulated answer
// channel when the owner's kind can have a human behind it (cli,
// gateway, external, subagent). Cron, kanban, single_query, api, webhook
// and internal owners stay without one, as they are when nobody attached
// a channel in the host, and resolve from their modes.
func parseAs(notation string) (owner.Owner, error) {
	o, err := owner.Parse(notation)
	if err != nil {
		return owner.Owner{}, err
	}
	switch o.Kind() {
	case owner.KindCLI, owner.KindGateway, owner.KindExternal, owner.KindSubagent:
		attended, err := o.WithChannel(checkChannel{})
		if err != nil {
			return owner.Owner{}, fmt.Errorf("simulate an answer channel for %s: %w", o, err)
		}
		return attended, nil
	}
	return o, nil
}

// asUsageError is the usage error for a bad --as OWNER: what is wrong,
// then every accepted form.
func asUsageError(err error) error {
	return usageError{fmt.Errorf("--as: %w\nOWNER is one of: %s", err, ownerForms)}
}

// decideAs runs the gate's decision table for line as o, and applies the
// deny rules to the analysis as check does without --as. The analysis is
// the gate's own, so the report shows what was decided on.
//
// A gate failure is returned beside a result that holds the deny it
// became (rule "error"), so the caller can show both.
func decideAs(ctx context.Context, rules *checkRules, o owner.Owner, line string) (checkResult, error) {
	if rules == nil || rules.gate == nil {
		return checkResult{}, errors.New("decide: no policy loaded")
	}
	d, err := rules.gate.Decide(owner.With(ctx, o), action.NewShell(line))
	a := d.Analysis
	if a == nil { // the gate failed before it analysed the command
		a = rules.gate.Analyse(line)
	}
	res := evaluateAnalysis(line, a, rules.deny)
	res.as = &asResult{owner: o, decision: d}
	if err != nil {
		return res, fmt.Errorf("decide: %w", err)
	}
	return res, nil
}

// checkAs is warden check --as: the report, then the exit status of the
// decision (0 allow, 1 ask, 2 deny).
func checkAs(ctx context.Context, opts checkOptions, rules *checkRules, o owner.Owner, line string, stdout io.Writer) error {
	res, derr := decideAs(ctx, rules, o, line)
	if res.as == nil {
		return derr
	}
	if opts.explain {
		// The gate's analysis decided; this one, with the same reading,
		// also records each program's option parse.
		res.analysis = opts.analyser().Analyze(line)
		res.explain = true
	}
	var err error
	if opts.json {
		err = writeCheckJSON(stdout, res)
	} else {
		err = writeCheckHuman(stdout, res, useColor(opts.color, stdout))
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if derr != nil {
		return derr // a deny (exit 2); the reason goes to stderr
	}
	if code := decisionExit(res.as.decision.Verdict); code != ExitSafe {
		return exitStatus(code)
	}
	return nil
}

// attendance says in words whether a human can be asked for o.
func attendance(o owner.Owner) string {
	switch {
	case o.Attended():
		return fmt.Sprintf("attended: simulated answer channel on surface %q", checkSurface)
	case o.CanAnswer():
		return "unattended: an owner along its lineage runs without a human"
	}
	return "unattended: no answer channel"
}
