package localapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

var _ CronStore = (*sqlite.DB)(nil)

// echoRunner "runs" a step by printing it: allowed unless it contains
// "deny", when it is denied the way cron_mode denies. It records the
// owner each step ran as.
type echoRunner struct {
	owners chan owner.Owner
}

func (e echoRunner) Shell(ctx context.Context, command, _ string, stdout, _ io.Writer) (runner.Outcome, int, error) {
	o, _ := owner.From(ctx)
	e.owners <- o
	if strings.Contains(command, "deny") {
		return runner.Outcome{Decision: gate.Decision{Verdict: gate.Deny, Rule: gate.RuleCronMode}, Message: "blocked: " + command}, -1, nil
	}
	_, _ = io.WriteString(stdout, command+"\n")
	return runner.Outcome{Decision: gate.Decision{Verdict: gate.Allow, Rule: gate.RuleSafe}, Allowed: true}, 0, nil
}

// cronServer serves the admin API with a real store and scheduler and
// returns a client for it.
func cronServer(t *testing.T) (*Client, echoRunner) {
	t.Helper()
	db := runnertest.Store(t)
	rn := echoRunner{owners: make(chan owner.Owner, 100)}
	sched, err := cron.New(cron.Options{Store: db, Runner: rn, Host: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sched.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	c := NewClient(serve(t, New(Options{Cron: sched, CronStore: db, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})))
	t.Cleanup(c.Close)
	return c, rn
}

func apiStatus(err error) int {
	if e, ok := errors.AsType[*APIError](err); ok {
		return e.Status
	}
	return 0
}

func TestCronAPI(t *testing.T) {
	c, rn := cronServer(t)
	ctx := t.Context()

	jobs, err := c.CronJobs(ctx)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("empty list: %v %v", jobs, err)
	}
	// "runs" is a job name like any other, though its history's path
	// is also a run's (/v1/cron/runs/history).
	j, err := c.AddCronJob(ctx, CronAddRequest{Name: "runs", Every: "1h", Steps: []string{"echo a", "echo b"}})
	if err != nil {
		t.Fatal(err)
	}
	if j.Schedule != "@every 1h" || j.NextRun.IsZero() || !j.Enabled || j.Overlap != store.OverlapSkip || j.CatchUp != store.CatchUpOnce {
		t.Fatalf("added: %+v", j)
	}
	run, err := c.RunCronJob(ctx, "runs")
	// The run may have ended already by the time it is read back.
	if err != nil || (run.Status != store.RunRunning && run.Status != store.RunSucceeded) || run.Trigger != store.TriggerManual {
		t.Fatalf("run: %+v %v", run, err)
	}
	ended, err := c.CronRun(ctx, run.ID, true)
	if err != nil || ended.Status != store.RunSucceeded || len(ended.Steps) != 2 || ended.Steps[1].Output != "echo b\n" {
		t.Fatalf("waited: %+v %v", ended, err)
	}
	// The run's owner is cron(job, run) with no parent.
	for range 2 {
		o := <-rn.owners
		if _, hasParent := o.Parent(); o.Kind() != owner.KindCron || hasParent || o.String() != "cron:runs,run="+run.ID+",session=cron%3Aruns%3A"+run.ID {
			t.Fatalf("step owner %s", o)
		}
	}
	hist, err := c.CronHistory(ctx, "runs", 0)
	if err != nil || len(hist) != 1 || hist[0].ID != run.ID {
		t.Fatalf("history of runs: %+v %v", hist, err)
	}

	// A denied step fails the run with the reason.
	if _, err := c.AddCronJob(ctx, CronAddRequest{Name: "d", Schedule: "@daily", Steps: []string{"echo ok", "deny me", "echo never"}}); err != nil {
		t.Fatal(err)
	}
	run, err = c.RunCronJob(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	ended, err = c.CronRun(ctx, run.ID, true)
	if err != nil || ended.Status != store.RunFailed || len(ended.Steps) != 2 || ended.Steps[1].Verdict != "deny" || !strings.Contains(ended.Error, "blocked: deny me") {
		t.Fatalf("denied run: %+v %v", ended, err)
	}
	got, err := c.CronRun(ctx, run.ID, false)
	if err != nil || got.Status != store.RunFailed {
		t.Fatalf("get: %+v %v", got, err)
	}

	// Mistakes are 400s; a taken name 409; unknown names 404.
	for _, req := range []CronAddRequest{
		{Name: "x", Steps: []string{"true"}},
		{Name: "x", Schedule: "@daily", Every: "1h", Steps: []string{"true"}},
		{Name: "x", Schedule: "61 * * * *", Steps: []string{"true"}},
		{Name: "x", Every: "5x", Steps: []string{"true"}},
		{Name: "x", Schedule: "@daily", TZ: "Mars/Olympus", Steps: []string{"true"}},
		{Name: "x", Schedule: "@daily"},
		{Name: "x", Schedule: "@daily", Steps: []string{" "}},
		{Name: "x", Schedule: "@daily", Steps: []string{"true"}, Overlap: "sometimes"},
		{Name: "x", Schedule: "@daily", Steps: []string{"true"}, CatchUp: "always"},
		{Name: "bad name", Schedule: "@daily", Steps: []string{"true"}},
	} {
		if _, err := c.AddCronJob(ctx, req); apiStatus(err) != http.StatusBadRequest {
			t.Errorf("%+v: %v, want 400", req, err)
		}
	}
	if _, err := c.AddCronJob(ctx, CronAddRequest{Name: "d", Every: "1m", Steps: []string{"true"}}); apiStatus(err) != http.StatusConflict {
		t.Errorf("taken name: %v", err)
	}
	for name, err := range map[string]error{
		"run":     func() error { _, err := c.RunCronJob(ctx, "nope"); return err }(),
		"run bad": func() error { _, err := c.RunCronJob(ctx, "bad name"); return err }(),
		"history": func() error { _, err := c.CronHistory(ctx, "nope", 0); return err }(),
		"rm":      c.DeleteCronJob(ctx, "nope"),
		"get run": func() error { _, err := c.CronRun(ctx, "01NOSUCHRUN0000000000000000", true); return err }(),
	} {
		if !errors.Is(err, store.ErrNotFound) || (name != "get run" && !strings.Contains(err.Error(), `no cron job "`)) {
			t.Errorf("%s: %v, want 404", name, err)
		}
	}
	if err := c.call(ctx, http.MethodGet, "/v1/cron/runs/"+run.ID+"?wait=maybe", nil, nil); apiStatus(err) != http.StatusBadRequest {
		t.Errorf("bad wait: %v", err)
	}
	if err := c.call(ctx, http.MethodGet, "/v1/cron/d/other", nil, nil); apiStatus(err) != http.StatusNotFound {
		t.Errorf("unknown job subpath: %v", err)
	}

	if err := c.DeleteCronJob(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CronHistory(ctx, "d", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("history after rm: %v", err)
	}
	jobs, err = c.CronJobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].Name != "runs" {
		t.Fatalf("list after rm: %+v %v", jobs, err)
	}
}

// TestCronAPIWithoutScheduler: a server without cron answers 503.
func TestCronAPIWithoutScheduler(t *testing.T) {
	c := NewClient(serve(t, New(Options{Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})))
	defer c.Close()
	if _, err := c.CronJobs(t.Context()); apiStatus(err) != http.StatusServiceUnavailable {
		t.Fatalf("list: %v", err)
	}
}
