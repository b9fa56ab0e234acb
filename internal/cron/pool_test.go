package cron

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// TestWorkersBoundRuns: with two workers, five runs started together
// execute two at a time (the others wait their turn), and each runs
// exactly once.
func TestWorkersBoundRuns(t *testing.T) {
	const runs, workers = 5, 2
	var (
		mu            sync.Mutex
		running, most int
		entered       = make(chan struct{}, runs)
		release       = make(chan struct{})
	)
	f := newFixture(t, fixtureOptions{hook: func(ctx context.Context, cmd string) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
	}})
	f.sched.o.Workers = workers
	for i := range runs {
		f.add(fmt.Sprintf("job%d", i), "@yearly", "", "true")
	}
	f.start()
	ids := make([]string, runs)
	for i := range runs {
		id, err := f.sched.RunNow(t.Context(), fmt.Sprintf("job%d", i), owner.Owner{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	for range workers {
		<-entered
	}
	// Both workers are held; the other runs must still be waiting.
	f.sched.mu.Lock()
	queued := len(f.sched.queue)
	f.sched.mu.Unlock()
	if queued != runs-workers {
		t.Errorf("%d runs queued while %d workers are busy, want %d", queued, workers, runs-workers)
	}
	close(release)
	for i, id := range ids {
		r, err := f.sched.Wait(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.RunSucceeded || len(r.Steps) != 1 {
			t.Errorf("run of job%d: %s %q, %d steps", i, r.Status, r.Error, len(r.Steps))
		}
	}
	if most > workers {
		t.Errorf("%d runs executed at once, want at most %d", most, workers)
	}
	if n := len(f.rec.snapshot()); n != runs {
		t.Errorf("%d steps ran, want %d", n, runs)
	}
}

// TestRunTimeoutFreesWorker: a run that would hang forever is cut off by
// RunTimeout, recorded failed with why, and the run queued behind it on
// the one worker then gets it.
func TestRunTimeoutFreesWorker(t *testing.T) {
	f := newFixture(t, fixtureOptions{hook: func(ctx context.Context, cmd string) {
		if strings.Contains(cmd, "hang") {
			<-ctx.Done() // only the timeout ends it
		}
	}})
	f.sched.o.Workers = 1
	f.sched.o.RunTimeout = 100 * time.Millisecond
	f.add("hang", "@yearly", "", "echo hang")
	f.add("next", "@yearly", "", "echo next")
	f.start()
	hang, err := f.sched.RunNow(t.Context(), "hang", owner.Owner{})
	if err != nil {
		t.Fatal(err)
	}
	next, err := f.sched.RunNow(t.Context(), "next", owner.Owner{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.sched.Wait(t.Context(), hang)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.RunFailed || !strings.Contains(r.Error, ErrTimeout.Error()) {
		t.Errorf("hanging run: %s %q, want failed with %q", r.Status, r.Error, ErrTimeout)
	}
	if _, err = f.sched.Wait(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	// The run behind it had the worker: its step reached the runner.
	// (How it ended is the machine's: on a loaded one its sandboxed
	// echo may itself outlast the 100 ms bound.)
	ran := false
	for _, c := range f.rec.snapshot() {
		ran = ran || c.cmd == "echo next"
	}
	if !ran {
		t.Error("the run queued behind the hanging one never ran its step")
	}
}
