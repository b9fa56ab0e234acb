package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/dispatch"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/workerapi"
)

// cronWorkerArg is the test binary's "cron-worker JOB worker --task ID"
// mode: a kanban worker, spawned by the host's dispatcher through a
// wrapper script, that asks the host (workerapi cron_run) to run cron
// job JOB as a child of its run. It runs from init, before TestMain,
// so that kanban_test.go's TestMain stays as it is.
const cronWorkerArg = "cron-worker"

func init() {
	if len(os.Args) == 6 && os.Args[1] == cronWorkerArg && os.Args[3] == "worker" && os.Args[4] == "--task" {
		os.Exit(cronWorker(os.Args[2], os.Args[5]))
	}
}

// cronWorker says hello with the token on dispatch.TokenFD, asks for a
// cron run of job (waiting for it), comments "cron run ID: STATUS" on
// the task and completes the run.
func cronWorker(job, task string) int {
	ctx := context.Background()
	f := os.NewFile(dispatch.TokenFD, "token")
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	f.Close()
	token := strings.TrimSpace(string(buf[:n]))
	c, err := workerapi.Dial(ctx, os.Getenv(dispatch.SocketEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	h, err := c.Hello(ctx, token, task)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("cron-worker: run %s as %s\n", h.Run, h.Owner)
	res, err := c.CronRun(ctx, job, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := c.Comment(ctx, fmt.Sprintf("cron run %s: %s", res.RunID, res.Status)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := c.Complete(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestStory3_CronStartedByATaskKeepsTheLineage is the cron part of
// issue 5's story 3 (invariant 5): a kanban task's worker asks the host
// for a cron run (workerapi cron_run, the kanban run its parent) of a
// job with one dangerous step. A deny anywhere along the lineage wins:
//
//   - kanban_mode: approve, cron_mode: deny: denied by the cron run's
//     own mode (unattended.cron_mode);
//   - kanban_mode: deny, cron_mode: approve: denied by its parent's
//     mode (unattended.kanban_mode);
//   - both approve (the control): the step runs.
func TestStory3_CronStartedByATaskKeepsTheLineage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kanban, cron string
		rule         string // "" when the step is allowed
	}{
		{"approve", "deny", gate.RuleCronMode},
		{"deny", "approve", gate.RuleKanbanMode},
		{"approve", "approve", ""},
	} {
		t.Run("kanban_"+tc.kanban+"_cron_"+tc.cron, func(t *testing.T) {
			cfg := configured(t, "approvals:\n  kanban_mode: "+tc.kanban+"\n  cron_mode: "+tc.cron+"\n")
			// The dispatcher spawns `EXECUTABLE worker --task ID`; the
			// wrapper makes that this binary's cron-worker mode.
			wrapper := filepath.Join(t.TempDir(), "warden-cron-worker")
			script := fmt.Sprintf("#!/bin/sh\nexec '%s' %s nested \"$@\"\n", exe, cronWorkerArg)
			if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			cfg.Executable = wrapper
			th := startHost(t, cfg)
			ctx := t.Context()

			target := filepath.Join(th.cronDir, "x")
			mkdir(t, target)
			if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{
				Name: "nested", Schedule: "@daily", Steps: []string{"echo before", "rm -rf ./x"},
			}); err != nil {
				t.Fatal(err)
			}
			task, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "starts cron", Steps: []string{"true"}})
			if err != nil {
				t.Fatal(err)
			}
			card := waitTask(t, th.client, task.ID, store.TaskDone, store.TaskBlocked)
			if card.Status != store.TaskDone || len(card.Runs) != 1 || len(card.Comments) != 1 {
				t.Fatalf("task %s: status %s, %d runs, comments %+v; want done after one run with one comment", card.ID, card.Status, len(card.Runs), card.Comments)
			}
			kanbanRun := card.Runs[0].ID

			hist, err := th.client.CronHistory(ctx, "nested", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 1 {
				t.Fatalf("%d cron runs, want 1: %+v", len(hist), hist)
			}
			run := hist[0]
			if want := "cron run " + run.ID + ": " + string(run.Status); card.Comments[0].Body != want {
				t.Errorf("worker heard %q, want %q", card.Comments[0].Body, want)
			}
			if run.Trigger != store.TriggerParent || !strings.HasPrefix(run.Parent, "kanban:"+task.ID+",run="+kanbanRun) {
				t.Errorf("cron run %s: trigger %s parent %q, want parent kanban:%s,run=%s", run.ID, run.Trigger, run.Parent, task.ID, kanbanRun)
			}
			if len(run.Steps) != 2 {
				t.Fatalf("cron run %s: %d steps %+v, want 2", run.ID, len(run.Steps), run.Steps)
			}
			if s := run.Steps[0]; s.Verdict != "allow" || s.ExitCode != 0 || s.Output != "before\n" {
				t.Errorf("safe step: %+v", s)
			}
			rm := run.Steps[1]
			_, statErr := os.Stat(target)
			if tc.rule == "" {
				if run.Status != store.RunSucceeded || rm.Verdict != "allow" || rm.ExitCode != 0 || statErr == nil {
					t.Errorf("both modes approve: run %s %q, step %+v, target %v; want the step run", run.Status, run.Error, rm, statErr)
				}
				return
			}
			if run.Status != store.RunFailed || rm.Verdict != "deny" || rm.Rule != tc.rule || rm.ExitCode != -1 {
				t.Errorf("run %s %q, dangerous step %+v; want failed, denied by %s", run.Status, run.Error, rm, tc.rule)
			}
			if !strings.Contains(run.Error, "step 2 denied ("+tc.rule+")") {
				t.Errorf("run error %q lacks the rule %s", run.Error, tc.rule)
			}
			if statErr != nil {
				t.Errorf("the denied step ran: %v", statErr)
			}
			// The audit log says the same: the deny is the cron run's,
			// with the kanban run in its lineage, and nobody was asked.
			recs := th.decisions(t)
			denies := 0
			for _, d := range recs {
				if d.Verdict == "deny" {
					denies++
					// The owner notation is the lineage, parent first.
					if d.Rule != tc.rule || !strings.HasPrefix(d.OwnerText, "kanban:"+task.ID+",run="+kanbanRun) ||
						!strings.Contains(d.OwnerText, ">cron:nested,run="+run.ID) || d.RequestID != "" {
						t.Errorf("deny record %d: %s %s request %q", d.Seq, d.OwnerText, d.Rule, d.RequestID)
					}
				}
			}
			if denies != 1 {
				t.Errorf("%d deny records, want 1", denies)
			}
		})
	}
}
