package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// expireWait is how long the lease tests sleep for a lease of expired
// (1ms) to lapse: far beyond it, so the test does not race the clock.
const (
	expired    = time.Millisecond
	expireWait = 50 * time.Millisecond
	longLease  = time.Hour
)

// claimLeased claims the next ready task for run, held by holder for
// lease (none without one), and fails t if it cannot.
func claimLeased(t *testing.T, s store.BoardStore, run, holder string, lease time.Duration) store.TaskRun {
	t.Helper()
	_, r, err := s.ClaimTask(t.Context(), store.TaskClaim{Run: run, At: base, Holder: holder, Lease: lease})
	must(t, "claim "+run, err)
	return r
}

// leaseTests pin down task claims with leases: a claim carries its
// holder and lease; only the holder renews it; an expired lease is
// reclaimed (the run fails, the task goes back to ready, or to blocked
// at the limit) exactly once however many reclaim at once; a renewed
// or lease-less claim is never reclaimed; a reclaimed run cannot be
// renewed.
var leaseTests = []boardTest{
	{"a claim carries its holder and lease", func(t *testing.T, s store.BoardStore) {
		addTask(t, s, boardTask("a"))
		before := time.Now()
		r := claimLeased(t, s, "r1", "host-1", longLease)
		if r.Holder != "host-1" || r.LeaseExpires.Before(before.Add(longLease-time.Minute)) {
			t.Errorf("claimed run: holder %q lease %v, want host-1 and about an hour from now", r.Holder, r.LeaseExpires)
		}
		got, err := s.GetRun(t.Context(), "r1")
		must(t, "GetRun", err)
		if got.Holder != "host-1" || !got.LeaseExpires.Equal(r.LeaseExpires) {
			t.Errorf("read back: holder %q lease %v, want %q %v", got.Holder, got.LeaseExpires, r.Holder, r.LeaseExpires)
		}
		addTask(t, s, boardTask("b"))
		r2 := claimLeased(t, s, "r2", "", 0)
		if !r2.LeaseExpires.IsZero() || r2.Holder != "" {
			t.Errorf("a claim without a lease: %+v", r2)
		}
	}},
	{"only the holder renews", func(t *testing.T, s store.BoardStore) {
		addTask(t, s, boardTask("a"))
		r := claimLeased(t, s, "r1", "host-1", expired)
		if _, err := s.RenewRun(t.Context(), "r1", "host-2", longLease); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("renewal by another holder: %v, want ErrLeaseLost", err)
		}
		time.Sleep(expireWait)
		// Expired but not reclaimed yet: the holder may still renew.
		got, err := s.RenewRun(t.Context(), "r1", "host-1", longLease)
		must(t, "renew", err)
		if !got.LeaseExpires.After(r.LeaseExpires) {
			t.Errorf("renewed lease %v not after %v", got.LeaseExpires, r.LeaseExpires)
		}
		ended, err := s.ReclaimRuns(t.Context(), "lease expired", 0, base)
		must(t, "reclaim", err)
		if len(ended) != 0 {
			t.Errorf("a renewed run was reclaimed: %+v", ended)
		}
		if _, err := s.RenewRun(t.Context(), "missing", "host-1", longLease); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("renew an unknown run: %v, want ErrNotFound", err)
		}
	}},
	{"an expired lease is reclaimed once, and its holder learns it", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("b"))
		addTask(t, s, boardTask("c"))
		claimLeased(t, s, "ra", "dead", expired)
		claimLeased(t, s, "rb", "live", longLease)
		claimLeased(t, s, "rc", "", 0)
		time.Sleep(expireWait)
		var (
			mu  sync.Mutex
			got []store.TaskRun
			wg  sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				ended, err := s.ReclaimRuns(ctx, "the claimer stopped renewing its lease", 0, base.Add(time.Hour))
				if err != nil {
					t.Errorf("reclaim: %v", err)
				}
				mu.Lock()
				got = append(got, ended...)
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(got) != 1 || got[0].ID != "ra" || got[0].Status != store.TaskRunFailed || got[0].Error != "the claimer stopped renewing its lease" {
			t.Fatalf("reclaimed by four reclaimers: %+v, want run ra failed once", got)
		}
		ta, err := s.GetTask(ctx, "a")
		must(t, "get a", err)
		if ta.Status != store.TaskReady || ta.Retries != 1 || ta.Run != "" {
			t.Errorf("task a after reclaim: %s retries %d run %q, want ready, 1, no run", ta.Status, ta.Retries, ta.Run)
		}
		for id, want := range map[string]store.TaskStatus{"b": store.TaskRunning, "c": store.TaskRunning} {
			if st := taskStatus(t, s, id); st != want {
				t.Errorf("task %s: %s, want %s", id, st, want)
			}
		}
		if _, err := s.RenewRun(ctx, "ra", "dead", longLease); !errors.Is(err, store.ErrTaskRunEnded) {
			t.Errorf("the dead holder renews its reclaimed run: %v, want ErrTaskRunEnded", err)
		}
		if _, err := s.AppendRunStep(ctx, "ra", store.TaskStep{Command: "late"}); !errors.Is(err, store.ErrTaskRunEnded) {
			t.Errorf("the dead holder records a step: %v, want ErrTaskRunEnded", err)
		}
		// The task is claimed again, by a live claimer.
		r := claimLeased(t, s, "ra2", "live", longLease)
		if r.Task != "a" {
			t.Errorf("claimed %s, want the reclaimed task a", r.Task)
		}
	}},
	{"a reclaimed run counts toward the failure limit", func(t *testing.T, s store.BoardStore) {
		addTask(t, s, boardTask("a"))
		claimLeased(t, s, "r1", "dead", expired)
		time.Sleep(expireWait)
		ended, err := s.ReclaimRuns(t.Context(), "lease expired", 1, base)
		must(t, "reclaim", err)
		if len(ended) != 1 {
			t.Fatalf("reclaimed %d runs, want 1", len(ended))
		}
		ta, err := s.GetTask(t.Context(), "a")
		must(t, "get", err)
		if ta.Status != store.TaskBlocked || ta.LastError != "lease expired" {
			t.Errorf("task at its failure limit: %s %q, want blocked with the reason", ta.Status, ta.LastError)
		}
	}},
}

// RunHosts is the conformance suite for store.Hosts: leases of the
// processes sharing a store. open returns a new, empty store for each
// subtest (closed, if an io.Closer, when the subtest ends); it must
// keep cron jobs too, since reaping a host ends its cron runs.
func RunHosts(t *testing.T, open func(t *testing.T) HostStore) {
	t.Helper()
	runCases(t, open, hostTests)
}

// HostStore is what RunHosts tests.
type HostStore interface {
	store.Hosts
	store.CronStore
}

var hostTests = []testCase[HostStore]{
	{"join, renew, list, leave", func(t *testing.T, s HostStore) {
		ctx := t.Context()
		h, err := s.JoinHost(ctx, store.HostLease{ID: "h1", Addr: "10.0.0.1:7878"}, longLease)
		must(t, "join", err)
		if h.ID != "h1" || !h.Live || h.Addr != "10.0.0.1:7878" || !h.Expires.After(h.Renewed) {
			t.Errorf("joined: %+v", h)
		}
		if _, err := s.JoinHost(ctx, store.HostLease{ID: "h1"}, longLease); err == nil {
			t.Error("a second join under a taken id was accepted")
		}
		r, err := s.RenewHost(ctx, "h1", 2*longLease)
		must(t, "renew", err)
		if !r.Expires.After(h.Expires) {
			t.Errorf("renewed lease %v not after %v", r.Expires, h.Expires)
		}
		_, err = s.JoinHost(ctx, store.HostLease{ID: "h0"}, longLease)
		must(t, "join h0", err)
		hs, err := s.ListHosts(ctx)
		must(t, "list", err)
		if len(hs) != 2 || hs[0].ID != "h0" || hs[1].ID != "h1" {
			t.Errorf("hosts: %+v, want h0, h1", hs)
		}
		must(t, "leave", s.LeaveHost(ctx, "h1"))
		must(t, "leave again", s.LeaveHost(ctx, "h1"))
		if _, err := s.RenewHost(ctx, "h1", longLease); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("renew after leaving: %v, want ErrLeaseLost", err)
		}
	}},
	{"an expired lease is reaped once and its holder learns it", func(t *testing.T, s HostStore) {
		ctx := t.Context()
		_, err := s.JoinHost(ctx, store.HostLease{ID: "dead"}, expired)
		must(t, "join dead", err)
		_, err = s.JoinHost(ctx, store.HostLease{ID: "live"}, longLease)
		must(t, "join live", err)
		// A cron run of each.
		for _, h := range []string{"dead", "live"} {
			addCronJob(t, s, cronJob("job-"+h, cronBase))
			r, err := s.StartCronRun(ctx, store.CronStart{Job: "job-" + h, Trigger: store.TriggerManual, Host: h, At: cronBase})
			must(t, "start run", err)
			if r.Status != store.RunRunning {
				t.Fatalf("run of %s: %s", h, r.Status)
			}
		}
		time.Sleep(expireWait)
		hs, err := s.ListHosts(ctx)
		must(t, "list", err)
		for _, h := range hs {
			if h.Live != (h.ID == "live") {
				t.Errorf("host %s: live %v", h.ID, h.Live)
			}
		}
		var (
			mu     sync.Mutex
			reaped []string
			runs   int
			wg     sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				got, n, err := s.ReapHosts(ctx, cronBase.Add(time.Hour), "host stopped renewing its lease")
				if err != nil {
					t.Errorf("reap: %v", err)
				}
				mu.Lock()
				for _, h := range got {
					reaped = append(reaped, h.ID)
				}
				runs += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(reaped) != 1 || reaped[0] != "dead" || runs != 1 {
			t.Fatalf("four reapers reaped %v and %d runs, want [dead] and 1", reaped, runs)
		}
		for _, h := range []string{"dead", "live"} {
			rs := cronRuns(t, s, "job-"+h)
			want := store.RunRunning
			if h == "dead" {
				want = store.RunFailed
			}
			if len(rs) != 1 || rs[0].Status != want {
				t.Errorf("run of %s: %+v, want %s", h, rs, want)
			}
			if h == "dead" && rs[0].Error != "host stopped renewing its lease" {
				t.Errorf("reaped run's error: %q", rs[0].Error)
			}
		}
		if _, err := s.RenewHost(ctx, "dead", longLease); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the reaped host renews: %v, want ErrLeaseLost", err)
		}
		if _, err := s.RenewHost(ctx, "live", longLease); err != nil {
			t.Errorf("the live host renews: %v", err)
		}
	}},
}

// FencedStore is what RunFencedRuns tests: the run stores and the
// process records.
type FencedStore interface {
	store.BoardStore
	store.Hosts
	store.CronStore
	store.Processes
}

// RunFencedRuns pins down that a dead claimer's run is not retried
// while process records name it (they may still run on a machine whose
// fence has not confirmed them dead, and only that machine's can): an
// expired kanban lease is not reclaimed, and a dead host's cron run is
// not failed, until the records are forgotten; then a later pass ends
// them. open returns a new, empty store for each subtest (closed, if an
// io.Closer, when the subtest ends).
func RunFencedRuns(t *testing.T, open func(t *testing.T) FencedStore) {
	t.Helper()
	fresh := func(t *testing.T) FencedStore { return openFresh(t, open) }
	leftover := func(id, run string) store.Process {
		return store.Process{ID: id, Spawner: "dead", SpawnerPID: 10, SpawnerStart: 20, Machine: "elsewhere", Boot: "b",
			PID: 30, Start: 40, PGID: 30, Sandboxed: true, Run: run, What: "sh", Started: base}
	}
	t.Run("a kanban run with leftovers is not reclaimed", func(t *testing.T) {
		s := fresh(t)
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("b"))
		claimLeased(t, s, "ra", "dead", expired)
		claimLeased(t, s, "rb", "dead", expired)
		must(t, "record", s.RecordProcess(ctx, leftover("p1", store.KanbanRunKey("ra"))))
		// A record of another kind of run with the same id holds nothing.
		must(t, "record", s.RecordProcess(ctx, leftover("p2", store.CronRunKey("rb"))))
		time.Sleep(expireWait)
		ended, err := s.ReclaimRuns(ctx, "lease expired", 0, base)
		must(t, "reclaim", err)
		if len(ended) != 1 || ended[0].ID != "rb" {
			t.Fatalf("reclaimed %+v, want only rb (ra has a process on record)", ended)
		}
		if st := taskStatus(t, s, "a"); st != store.TaskRunning {
			t.Errorf("task a with a leftover on record: %s, want running", st)
		}
		must(t, "forget", s.ForgetProcess(ctx, "p1"))
		ended, err = s.ReclaimRuns(ctx, "lease expired", 0, base)
		must(t, "reclaim", err)
		if len(ended) != 1 || ended[0].ID != "ra" {
			t.Fatalf("reclaimed %+v after the fence, want ra", ended)
		}
		if st := taskStatus(t, s, "a"); st != store.TaskReady {
			t.Errorf("task a after the fence and reclaim: %s, want ready", st)
		}
	})
	t.Run("a dead host's cron run with leftovers is not failed", func(t *testing.T) {
		s := fresh(t)
		ctx := t.Context()
		_, err := s.JoinHost(ctx, store.HostLease{ID: "dead"}, expired)
		must(t, "join", err)
		addCronJob(t, s, cronJob("job", cronBase))
		r, err := s.StartCronRun(ctx, store.CronStart{Job: "job", Trigger: store.TriggerManual, Host: "dead", At: cronBase})
		must(t, "start run", err)
		must(t, "record", s.RecordProcess(ctx, leftover("p1", store.CronRunKey(r.ID))))
		time.Sleep(expireWait)
		reaped, n, err := s.ReapHosts(ctx, cronBase.Add(time.Hour), "host gone")
		must(t, "reap", err)
		if len(reaped) != 1 || n != 0 {
			t.Fatalf("reaped %v and %d runs, want the host and no run", reaped, n)
		}
		if rs := cronRuns(t, s, "job"); len(rs) != 1 || rs[0].Status != store.RunRunning {
			t.Fatalf("run with a leftover on record: %+v, want running", rs)
		}
		must(t, "forget", s.ForgetProcess(ctx, "p1"))
		_, n, err = s.ReapHosts(ctx, cronBase.Add(time.Hour), "host gone")
		must(t, "reap", err)
		if rs := cronRuns(t, s, "job"); n != 1 || len(rs) != 1 || rs[0].Status != store.RunFailed {
			t.Fatalf("after the fence: %d failed, runs %+v; want the run failed", n, rs)
		}
	})
}
