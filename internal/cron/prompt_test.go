package cron

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// promptRecorder is the scheduler's view of the agent: it records who
// asked, and the host's story tests run the real agent.
type promptRecorder struct {
	mu    sync.Mutex
	owner owner.Owner
	conv  string
	dir   string
	text  string
}

func (p *promptRecorder) Prompt(ctx context.Context, conversation, dir, prompt string, _ agent.Board) (agent.Transcript, error) {
	o, _ := owner.From(ctx)
	p.mu.Lock()
	p.owner, p.conv, p.dir, p.text = o, conversation, dir, prompt
	p.mu.Unlock()
	return agent.Transcript{Text: "terminal: ls\nBLOCKED: no\nreply: done", Calls: 1, Blocked: 1}, nil
}

func TestPromptJobRunsTheAgentAsTheRun(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	rec := &promptRecorder{}
	f.sched.o.Agent = rec
	if _, err := f.sched.AddJob(t.Context(), store.CronJob{Name: "p", Schedule: "@daily", Kind: store.CronPrompt, Steps: []string{"tidy the logs"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	f.start()
	r := f.runNow("p", owner.Owner{})
	if r.Status != store.RunSucceeded || len(r.Steps) != 1 {
		t.Fatalf("run %+v", r)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.owner.Kind() != owner.KindCron || rec.owner.Job() != "p" || rec.owner.Run() != r.ID || rec.owner.CanAnswer() {
		t.Errorf("agent ran as %s, want the run's cron owner without a channel", rec.owner)
	}
	if rec.conv != "cron:p:"+r.ID || rec.dir != f.dir || rec.text != "tidy the logs" {
		t.Errorf("agent got conversation %q dir %q prompt %q", rec.conv, rec.dir, rec.text)
	}
	if st := r.Steps[0]; st.Command != "tidy the logs" || !strings.Contains(st.Output, "BLOCKED: no") {
		t.Errorf("step %+v", st)
	}
}

func TestPromptJobWithoutAModelFails(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if _, err := f.sched.AddJob(t.Context(), store.CronJob{Name: "p", Schedule: "@daily", Kind: store.CronPrompt, Steps: []string{"hi"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	f.start()
	r := f.runNow("p", owner.Owner{})
	if r.Status != store.RunFailed || !strings.Contains(r.Error, "no model configured") {
		t.Fatalf("run %+v, want failed: no model configured", r)
	}
}
