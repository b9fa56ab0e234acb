package host

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// TestGuardianInTheHost: with approvals.mode smart and a model, the
// host's gate asks the guardian first. An approval runs the action and
// records no grant; a reviewer that keeps failing puts the session in
// manual mode, and the human is told so on the question itself.
func TestGuardianInTheHost(t *testing.T) {
	var failing atomic.Bool
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if failing.Load() {
			return llmtest.Error(500, "reviewer overloaded")
		}
		return llmtest.Text(`{"verdict":"approve","reason":"a build directory"}`)
	})
	cfg := newConfig(t)
	yaml := fmt.Sprintf("approvals:\n  mode: smart\n  smart_failure_threshold: 2\nllm:\n  base_url: %s\n  model: m\n  max_retries: 0\n", model.URL())
	writeConfig(t, cfg, yaml)
	th := startHost(t, cfg)
	ctx := t.Context()
	work := t.TempDir()

	// Approved by the reviewer: it runs, nothing is asked or granted.
	mkdir(t, work+"/build")
	s := startExec(ctx, th.client, localapi.ExecRequest{Session: "g1", Command: "rm -rf build", Dir: work})
	if e, _ := s.until(t, localapi.EventExit); *e.Code != 0 {
		t.Fatalf("exit %d", *e.Code)
	}
	if _, err := os.Stat(work + "/build"); !os.IsNotExist(err) {
		t.Fatalf("not run: %v", err)
	}
	if gs, err := th.st.ListGrants(ctx); err != nil || len(gs) != 0 {
		t.Fatalf("grants after a guardian approval: %+v %v", gs, err)
	}
	ds, err := th.st.Decisions(ctx, store.AuditFilter{})
	if err != nil || ds[len(ds)-1].Rule != gate.RuleGuardianApprove {
		t.Fatalf("audit: %+v %v", ds, err)
	}

	// The reviewer fails: each question says so; after two failures the
	// session is in manual mode, and the question says that.
	failing.Store(true)
	for i, want := range []string{"could not decide", "manual mode"} {
		mkdir(t, work+"/build")
		s := startExec(ctx, th.client, localapi.ExecRequest{Session: "g1", Command: "rm -rf build", Dir: work})
		p, _ := s.until(t, localapi.EventPending)
		r, err := th.st.GetRequest(ctx, p.ID)
		if err != nil || !strings.Contains(r.Notice, want) || !strings.Contains(r.Notice, "Nothing was auto-approved") {
			t.Fatalf("question %d: notice %q (%v), want %q", i+1, r.Notice, err, want)
		}
		if page := consolePending(t, th, "g1"); !strings.Contains(page, `class="notice"`) || !strings.Contains(page, want) {
			t.Fatalf("question %d: the console does not show the notice", i+1)
		}
		if _, err := th.client.Approve(ctx, p.ID, localapi.ApproveRequest{}); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.until(t, localapi.EventExit); *e.Code != 0 {
			t.Fatalf("exit %d", *e.Code)
		}
	}
}
