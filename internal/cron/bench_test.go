package cron

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// The figures docs/performance.md quotes. Run them with
//
//	go test -run '^$' -bench 'Scheduler' -benchtime 1x ./internal/cron/
//
// They use the real SQLite store (synchronous=FULL), gate, runner and
// /bin/sh, on a store holding 10,000 jobs.

const benchJobs = 10_000

// loadJobs adds n jobs to f's store whose next runs are spread over
// the coming days (none due within the benchmark), named idle-00000….
func loadJobs(b *testing.B, f *fixture, n int) {
	b.Helper()
	now := time.Now()
	for i := range n {
		spec := fmt.Sprintf("%d %d * * *", i%60, i%24)
		j, err := Prepare(store.CronJob{Name: fmt.Sprintf("idle-%05d", i), Schedule: spec, Steps: []string{"true"}, Enabled: true}, now)
		if err != nil {
			b.Fatal(err)
		}
		// Tomorrow or later: idle for the benchmark's seconds.
		j.NextRun = j.NextRun.Add(24 * time.Hour)
		if err := f.db.AddCronJob(context.Background(), j); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSchedulerIdle measures the CPU the whole test process uses
// while the scheduler waits with 10,000 jobs loaded and none due: each
// iteration is one second of wall time. Reported as CPU milliseconds
// per second (10 ms/s is 1% of one core), for the default tick (one
// minute) and a one-second tick (a look at the store every second).
func BenchmarkSchedulerIdle(b *testing.B) {
	for _, tick := range []time.Duration{time.Minute, time.Second} {
		b.Run("tick="+tick.String(), func(b *testing.B) {
			f := newFixture(b, fixtureOptions{tick: tick})
			loadJobs(b, f, benchJobs)
			f.start()
			time.Sleep(200 * time.Millisecond) // past the first claim
			var cpu, wall time.Duration
			for b.Loop() {
				c0, w0 := cpuTime(b), time.Now()
				time.Sleep(time.Second)
				cpu += cpuTime(b) - c0
				wall += time.Since(w0)
			}
			f.stop()
			if runs := f.runs(""); len(runs) != 0 {
				b.Fatalf("%d runs while idle", len(runs))
			}
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/wall.Seconds(), "cpu-ms/s")
		})
	}
}

// timedRunner records when each step reached the runner.
type timedRunner struct {
	r  Runner
	mu sync.Mutex
	at map[string]time.Time // run id -> step entered
}

func (tr *timedRunner) Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error) {
	now := time.Now()
	o, _ := owner.From(ctx)
	tr.mu.Lock()
	tr.at[o.Run()] = now
	tr.mu.Unlock()
	return tr.r.Shell(ctx, command, dir, stdout, stderr)
}

// BenchmarkSchedulerFiring makes n jobs due at the same instant on a
// store holding 10,000 jobs and measures, per run, how long after the
// due time (median and p99):
//
//   - claim: the run was claimed (its started_at);
//   - step: its step reached the runner (gate, audit and shell next);
//   - exec: its command ("date +%s%N") was running, by the command's
//     own clock;
//   - done: the run was recorded ended;
//
// and steps/s, the runs' first steps per second over the burst, and
// failed-runs, runs whose step ran but failed (see below). Runs with a
// step that failed count in claim, step and done, not in exec.
//
// The jobs are loaded first with a slot an hour ahead of the
// scheduler's clock; then the clock jumps to the slot and the
// scheduler is woken, so however long loading took, all n fall due at
// one instant. Workers is the default (DefaultWorkers) unless the
// sub-benchmark names it. Each iteration is one such instant.
//
//	go test ./internal/cron -run '^$' -bench 'SchedulerFiring/due=10000' -benchtime 1x
func BenchmarkSchedulerFiring(b *testing.B) {
	for _, c := range []struct {
		due, workers int
		denied       bool
	}{{1000, 0, false}, {10000, 0, false}, {10000, 16, false}, {10000, 256, false}, {10000, 0, true}} {
		name := "due=" + strconv.Itoa(c.due)
		if c.workers > 0 {
			name += "/workers=" + strconv.Itoa(c.workers)
		}
		if c.denied {
			name += "/denied"
		}
		b.Run(name, func(b *testing.B) { benchFiring(b, c.due, c.workers, c.denied) })
	}
}

// benchFiring is one BenchmarkSchedulerFiring case. denied makes each
// job's step one the gate denies (rm -rf /): the run is decided,
// audited and recorded like any other but starts no process, which
// shows the scheduler's, the gate's and the store's part alone.
func benchFiring(b *testing.B, due, workers int, denied bool) {
	step, verdict := "date +%s%N", "allow"
	if denied {
		step, verdict = "rm -rf /", "deny"
	}
	f := newFixture(b, fixtureOptions{})
	tr := &timedRunner{r: f.rec, at: map[string]time.Time{}}
	f.sched.o.Runner = tr
	if workers > 0 {
		f.sched.o.Workers = workers
	}
	// The scheduler's clock: real time plus offset (nanoseconds).
	var offset atomic.Int64
	f.sched.o.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	loadJobs(b, f, max(benchJobs-due, 0))
	f.start()
	var claim, stepAt, exec, done []time.Duration
	failed, round := 0, 0
	for b.Loop() {
		b.StopTimer()
		slot := f.sched.o.Now().Add(time.Hour).Truncate(time.Second)
		names := make([]string, due)
		for i := range due {
			names[i] = fmt.Sprintf("due-%d-%05d", round, i)
			j, err := Prepare(store.CronJob{Name: names[i], Schedule: "@daily", Steps: []string{step}, Enabled: true}, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			j.NextRun, j.NextSlot = slot, slot.UTC().Format(time.RFC3339)
			if err := f.db.AddCronJob(context.Background(), j); err != nil {
				b.Fatal(err)
			}
		}
		// The jump: from now on the scheduler's clock reads slot.
		shift := time.Until(slot) + time.Duration(offset.Load())
		offset.Store(int64(shift))
		f.sched.Wake()
		b.StartTimer()
		// Wait without loading the store: every run has reached the
		// runner and none is active any more.
		deadline := time.Now().Add(30 * time.Minute)
		for {
			tr.mu.Lock()
			entered := len(tr.at)
			tr.mu.Unlock()
			f.sched.mu.Lock()
			active := len(f.sched.active)
			f.sched.mu.Unlock()
			if entered == (round+1)*due && active == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d runs reached the runner, %d active, after 30 minutes", entered-round*due, due, active)
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.StopTimer()
		all, err := f.db.ListCronRuns(context.Background(), "", 0)
		if err != nil {
			b.Fatal(err)
		}
		var runs []store.CronRun
		for _, r := range all {
			if strings.HasPrefix(r.Job, fmt.Sprintf("due-%d-", round)) {
				runs = append(runs, r)
			}
		}
		if len(runs) != due {
			b.Fatalf("%d runs of round %d, want %d", len(runs), round, due)
		}
		for _, r := range runs {
			// Each run ran its one step once. On an overloaded machine
			// a step may still fail (its sandboxed command's output not
			// drained within the sandbox's WaitDelay): counted, not fatal.
			if r.Status == store.RunRunning || len(r.Steps) != 1 || r.Steps[0].Verdict != verdict {
				b.Fatalf("run %+v", r)
			}
			tr.mu.Lock()
			entered := tr.at[r.ID]
			tr.mu.Unlock()
			claim = append(claim, r.Started.Sub(slot))
			stepAt = append(stepAt, entered.Add(shift).Sub(slot))
			done = append(done, r.Finished.Sub(slot))
			if denied {
				continue
			}
			ns, err := strconv.ParseInt(strings.TrimSpace(r.Steps[0].Output), 10, 64)
			if r.Status != store.RunSucceeded || err != nil {
				failed++
				continue
			}
			exec = append(exec, time.Unix(0, ns).Add(shift).Sub(slot))
		}
		round++
		b.StartTimer()
	}
	f.stop()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"claim", claim}, {"step", stepAt}, {"exec", exec}, {"done", done}} {
		if len(m.d) == 0 {
			continue
		}
		slices.Sort(m.d)
		b.ReportMetric(float64(m.d[len(m.d)/2])/float64(time.Millisecond), m.name+"-p50-ms")
		b.ReportMetric(float64(m.d[len(m.d)*99/100])/float64(time.Millisecond), m.name+"-p99-ms")
	}
	b.ReportMetric(float64(failed), "failed-runs")
	b.ReportMetric(float64(len(stepAt))/stepAt[len(stepAt)-1].Seconds(), "steps/s")
}
