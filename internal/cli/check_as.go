package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/policy"
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

// parseAs reads an owner notation and attaches the simulated answer
// channel when the owner's kind can have a human behind it (cli,
// gateway, external, subagent). Cron, kanban, single_query, api, webhook
// and internal owners stay without one, as they are when nobody attached
// a channel in the host, and resolve from their modes; a kanban run gets
// one in decideAs when kanban_mode is ask, as the host gives it the
// console then.
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

// decideAs runs the gate's decision table for line as o (whose answer
// channel, if any, is the simulated one of parseAs), with the deny rules
// applied as check does without --as: see explain.Decide.
func decideAs(ctx context.Context, rules *checkRules, o owner.Owner, line string) (explain.Explanation, error) {
	if rules == nil {
		return explain.Explanation{}, errors.New("decide: no policy loaded")
	}
	if o.Kind() == owner.KindKanban && !o.CanAnswer() && rules.gate.Policy().KanbanMode == policy.UnattendedAsk {
		// The host gives a kanban run its web console under
		// kanban_mode ask: simulate that channel too.
		if ch, err := o.WithChannel(checkChannel{}); err == nil {
			o = ch
		}
	}
	e, err := explain.Decide(ctx, rules.gate, rules.deny, o, line)
	if e.Decision != nil {
		e.Decision.Simulated = true
	}
	return e, err
}

// checkAs is warden check --as: the report, then the exit status of the
// decision (0 allow, 1 ask, 2 deny).
func checkAs(ctx context.Context, opts checkOptions, rules *checkRules, o owner.Owner, line string, stdout io.Writer) error {
	e, derr := decideAs(ctx, rules, o, line)
	if e.Decision == nil {
		return derr
	}
	if opts.explain {
		// The gate's analysis decided; this one, with the same reading,
		// also records each program's option parse.
		e.Analysis = opts.analyser().Analyze(line)
		e.Reading = true
	}
	if err := writeExplanation(stdout, e, opts); err != nil {
		return err
	}
	if derr != nil {
		return derr // a deny (exit 2); the reason goes to stderr
	}
	if code := decisionExit(e.Decision.Verdict); code != ExitSafe {
		return exitStatus(code)
	}
	return nil
}
