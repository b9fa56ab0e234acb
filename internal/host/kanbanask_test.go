package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/store"
)

// TestInvariant09_KanbanAskParksOnlyWithTheConsole: under kanban_mode
// ask the host hands out its web console as a kanban run's channel, and
// only a run that carries it is asked. A run without it, a cron run it
// started and a sub-agent of it without a channel are decided at once
// (no request row, no wait, though the timeout is an hour); after a
// reload to deny the host hands out nothing, and a run still holding
// the console is decided by the new mode at once.
func TestInvariant09_KanbanAskParksOnlyWithTheConsole(t *testing.T) {
	cfg := configured(t, "approvals:\n  timeout: 3600\n  kanban_mode: ask\n  cron_mode: approve\n  unattended_mode: approve\n")
	obs := &observedStore{}
	cfg.wrap = func(s store.Store) store.Store { obs.Store = s; return obs }
	th := startHost(t, cfg)
	if !strings.Contains(th.out.String(), "kanban:  kanban_mode ask: dangerous kanban steps wait up to 1h0m0s for an answer on the console") {
		t.Errorf("banner:\n%s", th.out.String())
	}
	ch := th.kanbanChannel()
	if ch == nil || ch.Surface() != "web" {
		t.Fatalf("kanban channel under ask: %v", ch)
	}
	must := func(o owner.Owner, err error) owner.Owner {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	bare := must(must(owner.Kanban("", "T1", "r1")).WithSession("kanban:T1"))
	attended := must(bare.WithChannel(ch))
	dangerous := action.NewShell("rm -rf build").In(t.TempDir())
	atOnce := func(name string, o owner.Owner, rule string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(owner.With(t.Context(), o), 30*time.Second)
		defer cancel()
		start := time.Now()
		out, err := th.runner.Authorize(ctx, dangerous)
		if err != nil || out.Allowed || out.Request != nil || out.Decision.Rule != rule {
			t.Errorf("%s: %+v %v, want denied by %s without a request", name, out.Decision, err, rule)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s took %v: it waited", name, took)
		}
	}
	atOnce("kanban without the console", bare, gate.RuleKanbanMode)
	atOnce("cron run started by the attended run", must(must(owner.Cron("J", "c1")).WithParent(attended)), gate.RuleKanbanMode)
	atOnce("sub-agent of the attended run without a channel", must(must(owner.Subagent("s")).WithParent(attended)), gate.RuleKanbanMode)
	if n := obs.creates.Load(); n != 0 {
		t.Fatalf("%d requests created for owners nobody can answer for", n)
	}

	// The run with the console is asked; its asker going away withdraws it.
	ctx, cancel := context.WithCancel(owner.With(t.Context(), attended))
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, _ := th.runner.Authorize(ctx, dangerous)
		if out.Allowed || out.Request == nil || out.Request.State != store.Withdrawn {
			t.Errorf("attended run: %+v", out)
		}
	}()
	waitFor(t, "the attended run's question", func() bool {
		ps, err := th.broker.Pending(t.Context(), "kanban:T1")
		return err == nil && len(ps) == 1
	})
	cancel()
	<-done

	// Reload to deny: nothing handed out; the console a run still holds
	// is no longer honoured.
	writeConfig(t, cfg, "approvals:\n  timeout: 3600\n  kanban_mode: deny\n")
	waitFor(t, "the reload", func() bool { return th.gate.Policy().KanbanMode == policy.UnattendedDeny })
	if ch := th.kanbanChannel(); ch != nil {
		t.Errorf("kanban channel under deny: %v", ch)
	}
	before := obs.creates.Load()
	atOnce("a run holding the console after the reload", attended, gate.RuleKanbanMode)
	if obs.creates.Load() != before {
		t.Error("a request was created after the reload to deny")
	}
	if _, err := th.broker.Ask(t.Context(), broker.Question{Owner: bare, Action: dangerous}); !errors.Is(err, broker.ErrNoChannel) {
		t.Errorf("broker.Ask for a kanban run without a channel: %v", err)
	}
}
