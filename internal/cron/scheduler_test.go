package cron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// run, the loop, a store pool.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder wraps the real runner and records who asked for each step,
// as the run's context says. hook, if set, runs before the step.
type recorder struct {
	r    *runner.Runner
	hook func(ctx context.Context, cmd string)

	mu    sync.Mutex
	calls []call
}

type call struct {
	cmd   string
	owner owner.Owner
	ok    bool
	probe any // the test's probe value, if it leaked into the run
}

// probeKey is a context key the tests bind around Run: a run must not
// see it.
type probeKey struct{}

func (rec *recorder) Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error) {
	o, ok := owner.From(ctx)
	rec.mu.Lock()
	rec.calls = append(rec.calls, call{cmd: command, owner: o, ok: ok, probe: ctx.Value(probeKey{})})
	rec.mu.Unlock()
	if rec.hook != nil {
		rec.hook(ctx, command)
	}
	return rec.r.Shell(ctx, command, dir, stdout, stderr)
}

func (rec *recorder) snapshot() []call {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.calls)
}

type fixture struct {
	t     testing.TB
	db    *sqlite.DB
	rec   *recorder
	sched *Scheduler
	dir   string

	cancel context.CancelFunc
	done   chan error
}

type fixtureOptions struct {
	policy string // YAML
	tick   time.Duration
	hook   func(ctx context.Context, cmd string)
	ended  func(ctx context.Context, session string)
}

// newFixture builds the real thing on a temp dir: SQLite store, gate
// with the given policy, runner with a terminal, scheduler.
func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	dir := t.TempDir()
	log := runnertest.Logger(t)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	rf := runnertest.New(t, runnertest.Options{Policy: fo.policy, Dir: dir, Logger: log})
	db := rf.DB
	rec := &recorder{hook: fo.hook, r: rf.Runner}
	s, err := New(Options{Store: db, Runner: rec, Host: "host-test", Logger: log, Tick: fo.tick, Dir: work, Ended: fo.ended})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, rec: rec, sched: s, dir: work}
}

// start runs the scheduler until stop (or the test's end). parent is
// the context Run gets: it carries a probe value and an owner that no
// run may see.
func (f *fixture) start() {
	f.t.Helper()
	ctx := context.WithValue(context.Background(), probeKey{}, "leaked")
	ctx = owner.With(ctx, owner.CLI())
	ctx, f.cancel = context.WithCancel(ctx)
	f.done = make(chan error, 1)
	go func() { f.done <- f.sched.Run(ctx) }()
	f.t.Cleanup(f.stop)
}

// stop cancels Run and waits for it to return.
func (f *fixture) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	f.cancel = nil
	if err := <-f.done; err != nil {
		f.t.Errorf("Run: %v", err)
	}
}

func (f *fixture) add(name, spec, tz string, steps ...string) store.CronJob {
	f.t.Helper()
	j, err := f.sched.AddJob(context.Background(), store.CronJob{Name: name, Schedule: spec, TZ: tz, Steps: steps, Enabled: true})
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

func (f *fixture) runs(job string) []store.CronRun {
	f.t.Helper()
	runs, err := f.db.ListCronRuns(context.Background(), job, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Reverse(runs) // oldest first
	return runs
}

// waitRuns polls until job has n ended runs (real time).
func (f *fixture) waitRuns(job string, n int) []store.CronRun {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs := f.runs(job)
		ended := 0
		for _, r := range runs {
			if r.Status != store.RunRunning {
				ended++
			}
		}
		if ended >= n {
			return runs
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("job %s: %d ended runs after 30s, want %d: %+v", job, ended, n, runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) runNow(name string, parent owner.Owner) store.CronRun {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := f.sched.RunNow(ctx, name, parent)
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.sched.Wait(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestRunOwnerIsExactlyCron(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.add("nightly", "@every 1s", "", "echo hello")
	f.start()
	// Two runs that ran their step: on a loaded machine a slot may come
	// while the run before it still runs, and is skipped (overlap: skip),
	// so the first ended runs need not be the ones that ran.
	var runs []store.CronRun
	deadline := time.Now().Add(60 * time.Second)
	for len(runs) < 2 {
		runs = runs[:0]
		for _, r := range f.runs("nightly") {
			if r.Status == store.RunSucceeded {
				runs = append(runs, r)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d succeeded runs after 60s, want 2", len(runs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.stop()
	calls := f.rec.snapshot()
	if len(calls) < 2 {
		t.Fatalf("%d steps ran, want at least 2", len(calls))
	}
	byRun := map[string]call{}
	for _, c := range calls {
		if !c.ok {
			t.Fatalf("a step ran with no owner")
		}
		byRun[c.owner.Run()] = c
	}
	for _, r := range runs[:2] {
		c, ok := byRun[r.ID]
		if !ok {
			t.Fatalf("no step ran as run %s", r.ID)
		}
		want, err := owner.Cron("nightly", r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want, err = want.WithSession("cron:nightly:" + r.ID); err != nil {
			t.Fatal(err)
		}
		if !c.owner.Equal(want) {
			t.Errorf("run %s: owner %s, want exactly %s", r.ID, c.owner, want)
		}
		if _, hasParent := c.owner.Parent(); hasParent || c.owner.CanAnswer() || c.owner.Attended() {
			t.Errorf("run %s: owner %s has a parent or an answer channel", r.ID, c.owner)
		}
		if c.probe != nil {
			t.Errorf("run %s: a value of Run's context leaked into the run: %v", r.ID, c.probe)
		}
		if r.Status != store.RunSucceeded || len(r.Steps) != 1 || r.Steps[0].Output != "hello\n" || r.Steps[0].ExitCode != 0 ||
			r.Steps[0].Verdict != "allow" || r.Trigger != store.TriggerSchedule || r.Host != "host-test" {
			t.Errorf("run %+v", r)
		}
	}
	// The audit log names the same owner for each decision.
	recs, err := f.db.Decisions(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range recs {
		if !strings.HasPrefix(d.Session, "cron:nightly:") || !strings.HasPrefix(d.OwnerText, "cron:nightly,run=") {
			t.Errorf("audit record owner %q session %q", d.OwnerText, d.Session)
		}
	}
	if len(recs) < 2 {
		t.Errorf("%d audit records, want one per step", len(recs))
	}
}

func TestDeniedStepFailsTheRun(t *testing.T) {
	for _, tc := range []struct {
		policy      string
		wantVerdict string
	}{
		{"approvals: {cron_mode: deny}", "deny"},
		{"approvals: {cron_mode: approve}", "allow"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{policy: tc.policy})
			if err := os.Mkdir(filepath.Join(f.dir, "scratch"), 0o700); err != nil {
				t.Fatal(err)
			}
			f.add("clean", "@daily", "", "echo start", "rm -rf ./scratch", "echo after")
			f.start()
			r := f.runNow("clean", owner.Owner{})
			if r.Trigger != store.TriggerManual {
				t.Errorf("trigger %s", r.Trigger)
			}
			_, statErr := os.Stat(filepath.Join(f.dir, "scratch"))
			if tc.wantVerdict == "allow" {
				if r.Status != store.RunSucceeded || len(r.Steps) != 3 || r.Steps[1].Rule != gate.RuleCronMode || !os.IsNotExist(statErr) {
					t.Errorf("approve: run %+v, scratch %v", r, statErr)
				}
				return
			}
			if r.Status != store.RunFailed || len(r.Steps) != 2 {
				t.Fatalf("run %+v: want failed after two steps", r)
			}
			if s := r.Steps[0]; s.Verdict != "allow" || s.Output != "start\n" || s.ExitCode != 0 {
				t.Errorf("step 1: %+v", s)
			}
			s := r.Steps[1]
			if s.Verdict != "deny" || s.Rule != gate.RuleCronMode || s.ExitCode != -1 || !strings.Contains(s.Output, "rm -rf ./scratch") || !strings.Contains(s.Output, "Do not retry") {
				t.Errorf("denied step: %+v", s)
			}
			if !strings.Contains(r.Error, "step 2 denied (unattended.cron_mode)") || !strings.Contains(r.Error, "without a human") {
				t.Errorf("run error %q", r.Error)
			}
			if statErr != nil {
				t.Errorf("the denied command ran: %v", statErr)
			}
		})
	}
}

func TestFailingStepFailsTheRun(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.add("fails", "@daily", "", "echo out; echo err >&2; exit 3", "echo never")
	f.add("loud", "@daily", "", "head -c 200000 /dev/zero | tr '\\0' x; echo; echo tail-end")
	f.start()
	r := f.runNow("fails", owner.Owner{})
	if r.Status != store.RunFailed || len(r.Steps) != 1 || r.Error != "step 1 exited with status 3" {
		t.Fatalf("run %+v", r)
	}
	if s := r.Steps[0]; s.ExitCode != 3 || !strings.Contains(s.Output, "out\n") || !strings.Contains(s.Output, "err\n") {
		t.Errorf("step %+v", s)
	}
	r = f.runNow("loud", owner.Owner{})
	out := r.Steps[0].Output
	if r.Status != store.RunSucceeded || len(out) > store.CronOutputCap || !strings.HasPrefix(out, "xxxx") ||
		!strings.HasSuffix(out, "x\ntail-end\n") || !strings.Contains(out, "bytes of output omitted") {
		t.Errorf("loud run %s: output %d bytes, ends %q", r.Status, len(out), out[max(0, len(out)-40):])
	}
}

// TestRunNowFromAKanbanWorker: the run's owner is the cron owner under
// the worker, and a deny anywhere along the lineage wins.
func TestRunNowFromAKanbanWorker(t *testing.T) {
	worker, err := owner.Kanban("", "T1", "R1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy string
		rule   string // of the dangerous step
		ok     bool
	}{
		{"approvals: {cron_mode: approve, kanban_mode: deny}", gate.RuleKanbanMode, false},
		{"approvals: {cron_mode: deny, kanban_mode: approve}", gate.RuleCronMode, false},
		{"approvals: {cron_mode: approve, kanban_mode: approve}", gate.RuleCronMode, true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{policy: tc.policy})
			if err := os.Mkdir(filepath.Join(f.dir, "scratch"), 0o700); err != nil {
				t.Fatal(err)
			}
			f.add("job", "@daily", "", "rm -rf ./scratch")
			f.start()
			r := f.runNow("job", worker)
			if r.Trigger != store.TriggerParent || r.Parent != worker.String() {
				t.Errorf("trigger %s parent %q, want parent %s", r.Trigger, r.Parent, worker)
			}
			if (r.Status == store.RunSucceeded) != tc.ok || r.Steps[0].Rule != tc.rule {
				t.Errorf("run %s, step %+v; want ok=%v by %s", r.Status, r.Steps[0], tc.ok, tc.rule)
			}
			c := f.rec.snapshot()[0]
			p, hasParent := c.owner.Parent()
			if c.owner.Kind() != owner.KindCron || c.owner.Run() != r.ID || !hasParent || !p.Equal(worker) {
				t.Errorf("owner %s, want cron:job,run=%s under %s", c.owner, r.ID, worker)
			}
		})
	}
}

func TestRunNowAndWait(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.add("job", "@daily", "", "true")
	early, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.sched.RunNow(early, "job", owner.Owner{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RunNow before Run: %v, want it to wait for Run", err)
	}
	f.start()
	if _, err := f.sched.RunNow(t.Context(), "nope", owner.Owner{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunNow of an unknown job: %v, want ErrNotFound", err)
	}
	if _, err := f.sched.Wait(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Wait for an unknown run: %v, want ErrNotFound", err)
	}
	if r := f.runNow("job", owner.Owner{}); r.Status != store.RunSucceeded {
		t.Errorf("run %+v", r)
	}
	// Waiting for an ended run returns at once.
	r := f.runs("job")[0]
	got, err := f.sched.Wait(t.Context(), r.ID)
	if err != nil || got.Status != store.RunSucceeded {
		t.Errorf("Wait for an ended run: %+v, %v", got, err)
	}
	if err := f.sched.Run(t.Context()); err == nil {
		t.Error("a second Run: no error")
	}
	f.stop()
	if _, err := f.sched.RunNow(t.Context(), "job", owner.Owner{}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("RunNow after Run returned: %v, want ErrNotRunning", err)
	}
}

// TestEndedHearsTheRunSession: when a run ends, Ended hears its session
// key (the host drops that run's shell state).
func TestEndedHearsTheRunSession(t *testing.T) {
	var mu sync.Mutex
	var ended []string
	f := newFixture(t, fixtureOptions{ended: func(_ context.Context, session string) {
		mu.Lock()
		defer mu.Unlock()
		ended = append(ended, session)
	}})
	f.add("job", "@daily", "", "true")
	f.start()
	r := f.runNow("job", owner.Owner{})
	f.stop()
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"cron:job:" + r.ID}; !slices.Equal(ended, want) {
		t.Fatalf("ended %q, want %q", ended, want)
	}
}

// TestGracefulStop: stopping the scheduler kills a running step and
// records the run failed with the cause.
func TestGracefulStop(t *testing.T) {
	entered := make(chan struct{}, 1)
	f := newFixture(t, fixtureOptions{hook: func(ctx context.Context, cmd string) {
		if cmd == "sleep 60" {
			entered <- struct{}{}
		}
	}})
	f.add("slow", "@daily", "", "sleep 60", "echo never")
	f.start()
	id, err := f.sched.RunNow(t.Context(), "slow", owner.Owner{})
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	time.Sleep(100 * time.Millisecond) // let the command start
	begin := time.Now()
	f.stop()
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("stop took %v", d)
	}
	r, err := f.db.GetCronRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.RunFailed || !strings.Contains(r.Error, "cron scheduler stopped") || len(r.Steps) != 1 ||
		!strings.Contains(r.Steps[0].Output, "cron scheduler stopped") {
		t.Errorf("run %+v: want failed with the cause", r)
	}
}

func TestStartEndsRunsOfEarlierHosts(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.add("job", "@daily", "", "true")
	old, err := f.db.StartCronRun(t.Context(), store.CronStart{Job: "job", Trigger: store.TriggerManual, Host: "host-before"})
	if err != nil {
		t.Fatal(err)
	}
	f.start()
	// The abandoned run no longer blocks the job (overlap skip).
	r := f.runNow("job", owner.Owner{})
	if r.Status != store.RunSucceeded {
		t.Errorf("new run %+v", r)
	}
	got, err := f.db.GetCronRun(t.Context(), old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunFailed || !strings.Contains(got.Error, "abandoned") {
		t.Errorf("old run %+v, want failed as abandoned", got)
	}
}

// Test20JobsDueAtOnce: twenty jobs due in the same second run at the
// same time, each as its own owner, and none sees another's.
func Test20JobsDueAtOnce(t *testing.T) {
	const n = 20
	var (
		mu      sync.Mutex
		arrived = 0
		all     = make(chan struct{})
	)
	f := newFixture(t, fixtureOptions{hook: func(ctx context.Context, cmd string) {
		// A barrier: no step goes on until all twenty are in flight.
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(20 * time.Second):
		}
	}})
	due := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	for i := range n {
		name := fmt.Sprintf("job%02d", i)
		j, err := Prepare(store.CronJob{Name: name, Schedule: "@daily", Steps: []string{"echo " + name}, Enabled: true}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		j.NextRun, j.NextSlot = due, due.UTC().Format(time.RFC3339)
		if err := f.db.AddCronJob(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	f.start()
	for i := range n {
		f.waitRuns(fmt.Sprintf("job%02d", i), 1)
	}
	select {
	case <-all:
	default:
		t.Fatal("the twenty runs did not run at the same time")
	}
	seen := map[string]bool{}
	for _, c := range f.rec.snapshot() {
		job := c.owner.Job()
		if c.cmd != "echo "+job || c.owner.SessionKey() != "cron:"+job+":"+c.owner.Run() {
			t.Errorf("step %q ran as %s", c.cmd, c.owner)
		}
		seen[c.owner.Run()] = true
	}
	for i := range n {
		runs := f.runs(fmt.Sprintf("job%02d", i))
		if len(runs) != 1 {
			t.Fatalf("job%02d: %d runs", i, len(runs))
		}
		r := runs[0]
		if r.Status != store.RunSucceeded || r.Steps[0].Output != fmt.Sprintf("job%02d\n", i) || !seen[r.ID] || !r.Scheduled.Equal(due) {
			t.Errorf("run %+v", r)
		}
	}
}

// The tests below run the scheduler in a bubble of virtual time
// (testing/synctest) with the real store, gate, runner and shell: the
// clock jumps to the next timer whenever every goroutine of the test
// is blocked, so days pass in milliseconds.

// sleepUntil sleeps in the bubble until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

func TestOverlapSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f := newFixture(t, fixtureOptions{hook: func(ctx context.Context, cmd string) {
			if cmd == "echo slow" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
		}})
		start := time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)
		sleepUntil(start)
		f.add("slow", "* * * * *", "", "echo slow")
		f.start()
		// 12:01 starts a run that blocks; 12:02, 12:03, 12:04 find it
		// running and are skipped.
		sleepUntil(start.Add(4 * time.Minute))
		close(release)
		synctest.Wait()
		sleepUntil(start.Add(5 * time.Minute))
		synctest.Wait()
		f.stop()
		var got []string
		for _, r := range f.runs("slow") {
			got = append(got, r.Scheduled.UTC().Format("15:04")+" "+string(r.Status))
		}
		want := []string{"12:01 succeeded", "12:02 skipped", "12:03 skipped", "12:04 skipped", "12:05 succeeded"}
		if !slices.Equal(got, want) {
			t.Errorf("runs %v, want %v", got, want)
		}
	})
}

func TestCatchUp(t *testing.T) {
	for _, policy := range []store.CatchUp{store.CatchUpOnce, store.CatchUpSkip} {
		t.Run(string(policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, fixtureOptions{})
				down := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
				sleepUntil(down)
				// The job was added before the host went down for
				// three days: 72 hourly slots were missed.
				j, err := Prepare(store.CronJob{Name: "hourly", Schedule: "0 * * * *", Steps: []string{"echo caught"}, CatchUp: policy, Enabled: true}, down)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.db.AddCronJob(t.Context(), j); err != nil {
					t.Fatal(err)
				}
				up := down.Add(72*time.Hour + 20*time.Minute)
				sleepUntil(up)
				f.start()
				synctest.Wait()
				sleepUntil(up.Add(45 * time.Minute)) // past the next slot, 15:00
				synctest.Wait()
				f.stop()
				var got []string
				for _, r := range f.runs("hourly") {
					got = append(got, fmt.Sprintf("%s %s %s %d", r.Scheduled.UTC().Format("01-02 15:04"), r.Trigger, r.Status, len(r.Steps)))
				}
				first := "05-01 13:00 catchup succeeded 1"
				if policy == store.CatchUpSkip {
					first = "05-01 13:00 catchup skipped 0"
				}
				want := []string{first, "05-04 13:00 schedule succeeded 1"}
				if !slices.Equal(got, want) {
					t.Errorf("runs %q, want %q", got, want)
				}
			})
		})
	}
}

// TestDSTThroughTheScheduler runs jobs in America/New_York across both
// 2026 changes with the whole loop: claims, persisted next runs and the
// store's per-slot de-duplication.
func TestDSTThroughTheScheduler(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		from, to   time.Time
		want       []string // local slot times
	}{
		{"spring: 2:30 runs at 3:00", "30 2 * * *",
			time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
			[]string{"03-08 03:00 EDT", "03-09 02:30 EDT"}},
		{"fall: 1:30 runs once", "30 1 * * *",
			time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC),
			[]string{"11-01 01:30 EDT", "11-02 01:30 EST"}},
		{"fall: hourly runs in both 1am hours", "0 * * * *",
			time.Date(2026, 11, 1, 3, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 8, 30, 0, 0, time.UTC),
			[]string{"11-01 00:00 EDT", "11-01 01:00 EDT", "11-01 01:00 EST", "11-01 02:00 EST", "11-01 03:00 EST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// A long tick: the loop wakes for due jobs only.
				f := newFixture(t, fixtureOptions{tick: 24 * time.Hour})
				sleepUntil(tc.from)
				f.add("job", tc.spec, "America/New_York", "true")
				f.start()
				sleepUntil(tc.to)
				synctest.Wait()
				f.stop()
				ny := mustZone(t, "America/New_York")
				var got []string
				for _, r := range f.runs("job") {
					if r.Status != store.RunSucceeded {
						t.Errorf("run %+v", r)
					}
					got = append(got, r.Scheduled.In(ny).Format("01-02 15:04 MST"))
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("runs at %q, want %q", got, tc.want)
				}
			})
		})
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"nightly": true, "db-backup_2.x": true, "A1": true, "9am": true,
		"": false, "-x": false, ".x": false, "a b": false, "a:b": false, "a/b": false, "ünï": false,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
	} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 3, 8, 1, 30, 0, 0, time.UTC)
	j, err := Prepare(store.CronJob{Name: "a", Schedule: "0 9 * * *", TZ: "America/New_York", Steps: []string{"true"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if j.Kind != store.CronScript || j.Overlap != store.OverlapSkip || j.CatchUp != store.CatchUpOnce || !j.Created.Equal(now) ||
		j.NextRun.UTC().Format(time.RFC3339) != "2026-03-08T13:00:00Z" || j.NextSlot != "2026-03-08T09:00:00" || j.Enabled {
		t.Errorf("prepared %+v", j)
	}
	for _, bad := range []store.CronJob{
		{Name: "a b", Schedule: "@daily", Steps: []string{"true"}},
		{Name: "a", Schedule: "@daily"},
		{Name: "a", Schedule: "61 * * * *", Steps: []string{"true"}},
		{Name: "a", Schedule: "@daily", Steps: []string{"true"}, Overlap: "queue"},
	} {
		if _, err := Prepare(bad, now); err == nil {
			t.Errorf("Prepare(%+v): no error", bad)
		}
	}
}
