package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/store"
)

// RunCron is the conformance suite for store.CronStore, each case on a
// new, empty store from open (runCases).
//
// Besides the interface's comments, the suite pins down:
//   - a slot fires at most once per job whatever the plan says, so a
//     plan that repeats a key (a DST fall-back) fires once;
//   - however many slots were missed, a claim yields at most one run per
//     job, and the job's next run is after now;
//   - concurrent claimers never claim one slot twice;
//   - a run ends exactly once; a late finisher gets store.ErrRunEnded
//     with the run as it ended;
//   - step output over store.CronOutputCap is stored capped, with the
//     truncation marker;
//   - lists are empty slices, never nil; runs list newest first.
func RunCron(t *testing.T, open func(t *testing.T) store.CronStore) {
	t.Helper()
	runCases(t, open, cronTests)
}

// cronBase is the cron fixtures' clock, on a whole minute.
var cronBase = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// everyMinute is a plan whose slots are whole minutes keyed by their
// UTC time, with a minute's grace.
var everyMinute = store.CronPlan{
	Next: func(j store.CronJob, after time.Time) (store.CronSlot, error) {
		at := after.Truncate(time.Minute).Add(time.Minute)
		return store.CronSlot{At: at, Key: at.UTC().Format(time.RFC3339)}, nil
	},
	Late: time.Minute,
}

// cronJob is a job fixture due at next.
func cronJob(name string, next time.Time) store.CronJob {
	return store.CronJob{
		Name: name, Schedule: "* * * * *", TZ: "Europe/Berlin", Kind: store.CronScript,
		Steps:   []string{"echo " + name, "true"},
		Overlap: store.OverlapSkip, CatchUp: store.CatchUpOnce, Enabled: true,
		NextRun: next, NextSlot: next.UTC().Format(time.RFC3339),
		Created: cronBase.Add(-time.Hour),
	}
}

// overlapping is j with overlap policy allow: its runs may overlap.
func overlapping(j store.CronJob) store.CronJob {
	j.Overlap = store.OverlapAllow
	return j
}

func addCronJob(t *testing.T, s store.CronStore, j store.CronJob) {
	t.Helper()
	must(t, "AddCronJob "+j.Name, s.AddCronJob(t.Context(), j))
}

func getCronJob(t *testing.T, s store.CronStore, name string) store.CronJob {
	t.Helper()
	j, err := s.GetCronJob(t.Context(), name)
	must(t, "GetCronJob "+name, err)
	return j
}

func claimCron(t *testing.T, s store.CronStore, now time.Time, plan store.CronPlan) []store.CronRun {
	t.Helper()
	runs, err := s.ClaimDue(t.Context(), now, "host-a", plan)
	must(t, "ClaimDue", err)
	if runs == nil {
		t.Error("ClaimDue returned nil, want an empty slice")
	}
	return runs
}

func cronRuns(t *testing.T, s store.CronStore, job string) []store.CronRun {
	t.Helper()
	runs, err := s.ListCronRuns(t.Context(), job, 0)
	must(t, "ListCronRuns "+job, err)
	return runs
}

// statuses lists runs as "trigger/status", oldest first.
func cronStatuses(runs []store.CronRun) []string {
	var out []string
	for _, r := range slices.Backward(runs) {
		out = append(out, string(r.Trigger)+"/"+string(r.Status))
	}
	return out
}

func normCronJob(j store.CronJob) store.CronJob {
	j.NextRun, j.Created = utc(j.NextRun), utc(j.Created)
	return j
}

// startManual starts a manual run of job on host at at (zero: now).
func startManual(t *testing.T, s store.CronStore, job, host string, at time.Time) store.CronRun {
	t.Helper()
	r, err := s.StartCronRun(t.Context(), store.CronStart{Job: job, Trigger: store.TriggerManual, Host: host, At: at})
	must(t, "StartCronRun "+job, err)
	return r
}

func finishCron(t *testing.T, s store.CronStore, id string, status store.RunStatus) store.CronRun {
	t.Helper()
	r, err := s.FinishCronRun(t.Context(), id, status, cronBase.Add(time.Hour), "")
	must(t, "FinishCronRun "+id, err)
	return r
}

var cronTests = []testCase[store.CronStore]{
	{"add get list", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		b := cronJob("b", cronBase.In(elsewhere))
		b.TZ, b.Overlap, b.CatchUp, b.Enabled = "", store.OverlapAllow, store.CatchUpSkip, false
		a := cronJob("a", cronBase.Add(time.Minute))
		addCronJob(t, s, b)
		addCronJob(t, s, a)
		got := getCronJob(t, s, "b")
		same(t, "GetCronJob", normCronJob(got), normCronJob(b))
		if !got.NextRun.Equal(b.NextRun) || !got.Created.Equal(b.Created) {
			t.Errorf("times %v %v, want %v %v", got.NextRun, got.Created, b.NextRun, b.Created)
		}
		list, err := s.ListCronJobs(ctx)
		must(t, "ListCronJobs", err)
		var names []string
		for _, j := range list {
			names = append(names, j.Name)
		}
		if !slices.Equal(names, []string{"a", "b"}) {
			t.Errorf("ListCronJobs names %v, want [a b]", names)
		}
	}},
	{"a job that never fires again", func(t *testing.T, s store.CronStore) {
		j := cronJob("a", time.Time{})
		j.NextSlot = ""
		addCronJob(t, s, j)
		if got := getCronJob(t, s, "a"); !got.NextRun.IsZero() {
			t.Errorf("NextRun %v, want zero", got.NextRun)
		}
		due, err := s.NextCronDue(t.Context())
		must(t, "NextCronDue", err)
		if !due.IsZero() {
			t.Errorf("NextCronDue %v, want zero", due)
		}
		if runs := claimCron(t, s, cronBase.Add(24*time.Hour), everyMinute); len(runs) != 0 {
			t.Errorf("claimed %d runs of a job that never fires", len(runs))
		}
	}},
	{"empty lists", func(t *testing.T, s store.CronStore) {
		jobs, err := s.ListCronJobs(t.Context())
		must(t, "ListCronJobs", err)
		runs, err := s.ListCronRuns(t.Context(), "", 10)
		must(t, "ListCronRuns", err)
		if jobs == nil || runs == nil || len(jobs) != 0 || len(runs) != 0 {
			t.Errorf("ListCronJobs %#v, ListCronRuns %#v; want empty slices", jobs, runs)
		}
	}},
	{"add refuses a taken name", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		other := cronJob("a", cronBase.Add(time.Hour))
		other.Steps = []string{"rm -rf /"}
		if err := s.AddCronJob(t.Context(), other); !errors.Is(err, store.ErrJobExists) {
			t.Errorf("AddCronJob of a taken name: %v, want ErrJobExists", err)
		}
		if got := getCronJob(t, s, "a"); !slices.Equal(got.Steps, cronJob("a", cronBase).Steps) {
			t.Errorf("the first job was changed: steps %q", got.Steps)
		}
	}},
	{"add refuses invalid jobs", func(t *testing.T, s store.CronStore) {
		for name, edit := range map[string]func(*store.CronJob){
			"no name":       func(j *store.CronJob) { j.Name = "" },
			"no schedule":   func(j *store.CronJob) { j.Schedule = "" },
			"no steps":      func(j *store.CronJob) { j.Steps = nil },
			"empty step":    func(j *store.CronJob) { j.Steps = []string{"true", ""} },
			"unknown kind":  func(j *store.CronJob) { j.Kind = "prompt" },
			"no kind":       func(j *store.CronJob) { j.Kind = "" },
			"bad overlap":   func(j *store.CronJob) { j.Overlap = "queue" },
			"no overlap":    func(j *store.CronJob) { j.Overlap = "" },
			"bad catch-up":  func(j *store.CronJob) { j.CatchUp = "all" },
			"no created at": func(j *store.CronJob) { j.Created = time.Time{} },
		} {
			j := cronJob("x", cronBase)
			edit(&j)
			if err := s.AddCronJob(t.Context(), j); err == nil {
				t.Errorf("%s: AddCronJob accepted it", name)
			}
		}
		if list, err := s.ListCronJobs(t.Context()); err != nil || len(list) != 0 {
			t.Errorf("after refusals: %d jobs, %v", len(list), err)
		}
	}},
	{"unknown names", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		if _, err := s.GetCronJob(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetCronJob: %v, want ErrNotFound", err)
		}
		if err := s.DeleteCronJob(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteCronJob: %v, want ErrNotFound", err)
		}
		if _, err := s.StartCronRun(ctx, store.CronStart{Job: "nope", Trigger: store.TriggerManual}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("StartCronRun: %v, want ErrNotFound", err)
		}
		if _, err := s.GetCronRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetCronRun: %v, want ErrNotFound", err)
		}
		if _, err := s.AppendCronStep(ctx, "nope", store.CronStep{Command: "true", Started: cronBase, Finished: cronBase}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AppendCronStep: %v, want ErrNotFound", err)
		}
		if _, err := s.FinishCronRun(ctx, "nope", store.RunSucceeded, cronBase, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FinishCronRun: %v, want ErrNotFound", err)
		}
	}},
	{"delete removes the job and its history", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		addCronJob(t, s, cronJob("a", cronBase))
		addCronJob(t, s, cronJob("b", cronBase))
		runs := claimCron(t, s, cronBase, everyMinute)
		if len(runs) != 2 {
			t.Fatalf("claimed %d runs, want 2", len(runs))
		}
		if err := s.DeleteCronJob(ctx, "a"); !errors.Is(err, store.ErrJobBusy) {
			t.Fatalf("DeleteCronJob while running: %v, want ErrJobBusy", err)
		}
		for _, r := range runs {
			finishCron(t, s, r.ID, store.RunSucceeded)
		}
		must(t, "DeleteCronJob", s.DeleteCronJob(ctx, "a"))
		if _, err := s.GetCronJob(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetCronJob after delete: %v", err)
		}
		if _, err := s.GetCronRun(ctx, runs[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetCronRun of a deleted job's run: %v, want ErrNotFound", err)
		}
		if got := cronRuns(t, s, ""); len(got) != 1 || got[0].Job != "b" {
			t.Errorf("runs left: %+v, want b's only", got)
		}
		// The name is free again, with no history.
		addCronJob(t, s, cronJob("a", cronBase))
		if got := cronRuns(t, s, "a"); len(got) != 0 {
			t.Errorf("a new job a has %d runs", len(got))
		}
	}},
	{"next due", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		due, err := s.NextCronDue(ctx)
		must(t, "NextCronDue", err)
		if !due.IsZero() {
			t.Errorf("no jobs: NextCronDue %v, want zero", due)
		}
		off := cronJob("off", cronBase)
		off.Enabled = false
		addCronJob(t, s, off)
		addCronJob(t, s, cronJob("late", cronBase.Add(2*time.Hour)))
		addCronJob(t, s, cronJob("soon", cronBase.Add(time.Hour)))
		due, err = s.NextCronDue(ctx)
		must(t, "NextCronDue", err)
		if !due.Equal(cronBase.Add(time.Hour)) {
			t.Errorf("NextCronDue %v, want %v (the disabled job does not count)", due, cronBase.Add(time.Hour))
		}
	}},
	{"claim a due job", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		addCronJob(t, s, cronJob("later", cronBase.Add(time.Hour)))
		off := cronJob("off", cronBase.Add(-time.Hour))
		off.Enabled = false
		addCronJob(t, s, off)
		now := cronBase.Add(1500 * time.Millisecond)
		runs := claimCron(t, s, now, everyMinute)
		if len(runs) != 1 {
			t.Fatalf("claimed %d runs, want 1: %+v", len(runs), runs)
		}
		r := runs[0]
		if r.ID == "" || r.Job != "a" || r.Trigger != store.TriggerSchedule || r.Status != store.RunRunning ||
			r.Slot != cronBase.Format(time.RFC3339) || !r.Scheduled.Equal(cronBase) || !r.Started.Equal(now) ||
			r.Host != "host-a" || !r.Finished.IsZero() || r.Parent != "" {
			t.Errorf("run %+v", r)
		}
		got, err := s.GetCronRun(t.Context(), r.ID)
		must(t, "GetCronRun", err)
		got.Scheduled, got.Started, r.Scheduled, r.Started = utc(got.Scheduled), utc(got.Started), utc(r.Scheduled), utc(r.Started)
		r.Steps = []store.CronStep{}
		same(t, "GetCronRun", got, r)
		j := getCronJob(t, s, "a")
		if want := cronBase.Add(time.Minute); !j.NextRun.Equal(want) || j.NextSlot != want.Format(time.RFC3339) {
			t.Errorf("next %v %q, want %v", j.NextRun, j.NextSlot, want)
		}
		if again := claimCron(t, s, now, everyMinute); len(again) != 0 {
			t.Errorf("a second claim at the same time: %d runs", len(again))
		}
		if off := getCronJob(t, s, "off"); !off.NextRun.Equal(cronBase.Add(-time.Hour)) {
			t.Errorf("the disabled job was advanced to %v", off.NextRun)
		}
	}},
	{"a slot just late is on time", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		runs := claimCron(t, s, cronBase.Add(everyMinute.Late), everyMinute)
		if len(runs) != 1 || runs[0].Trigger != store.TriggerSchedule {
			t.Fatalf("runs %+v, want one scheduled run", runs)
		}
	}},
	{"catch-up once runs once", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		now := cronBase.Add(72*time.Hour + 30*time.Second) // thousands of missed slots
		runs := claimCron(t, s, now, everyMinute)
		if len(runs) != 1 {
			t.Fatalf("claimed %d runs, want 1", len(runs))
		}
		r := runs[0]
		if r.Trigger != store.TriggerCatchUp || r.Status != store.RunRunning || !r.Scheduled.Equal(cronBase) {
			t.Errorf("run %+v, want a running catch-up run for the first missed slot", r)
		}
		j := getCronJob(t, s, "a")
		if want := now.Truncate(time.Minute).Add(time.Minute); !j.NextRun.Equal(want) {
			t.Errorf("next %v, want %v (the first slot after now)", j.NextRun, want)
		}
		if again := claimCron(t, s, now.Add(time.Second), everyMinute); len(again) != 0 {
			t.Errorf("claimed %d more runs", len(again))
		}
	}},
	{"catch-up skip records one skipped run", func(t *testing.T, s store.CronStore) {
		j := cronJob("a", cronBase)
		j.CatchUp = store.CatchUpSkip
		addCronJob(t, s, j)
		now := cronBase.Add(72 * time.Hour)
		if runs := claimCron(t, s, now, everyMinute); len(runs) != 0 {
			t.Fatalf("claimed %d runs, want none", len(runs))
		}
		hist := cronRuns(t, s, "a")
		if got := cronStatuses(hist); !slices.Equal(got, []string{"catchup/skipped"}) {
			t.Fatalf("history %v, want one skipped catch-up", got)
		}
		if !strings.Contains(hist[0].Error, "missed") || hist[0].Finished.IsZero() {
			t.Errorf("skipped run %+v: want a finished run saying it was missed", hist[0])
		}
		if got := getCronJob(t, s, "a"); !got.NextRun.After(now) {
			t.Errorf("next %v, want after %v", got.NextRun, now)
		}
		// The next slot on time runs.
		if runs := claimCron(t, s, now.Add(time.Minute), everyMinute); len(runs) != 1 || runs[0].Trigger != store.TriggerSchedule {
			t.Errorf("next slot: %+v, want one scheduled run", runs)
		}
	}},
	{"overlap skip", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		first := claimCron(t, s, cronBase, everyMinute)
		if len(first) != 1 {
			t.Fatalf("claimed %d, want 1", len(first))
		}
		for i := 1; i <= 3; i++ {
			if runs := claimCron(t, s, cronBase.Add(time.Duration(i)*time.Minute), everyMinute); len(runs) != 0 {
				t.Fatalf("minute %d: claimed %d runs while the first is running", i, len(runs))
			}
		}
		man := startManual(t, s, "a", "h", cronBase.Add(200*time.Second))
		if man.Status != store.RunSkipped || man.Finished.IsZero() {
			t.Errorf("manual run while running: %+v, want skipped", man)
		}
		hist := cronRuns(t, s, "a")
		want := []string{"schedule/running", "schedule/skipped", "schedule/skipped", "schedule/skipped", "manual/skipped"}
		if got := cronStatuses(hist); !slices.Equal(got, want) {
			t.Fatalf("history %v, want %v", got, want)
		}
		if !strings.Contains(hist[1].Error, "still running") {
			t.Errorf("skipped run's error %q", hist[1].Error)
		}
		finishCron(t, s, first[0].ID, store.RunSucceeded)
		if runs := claimCron(t, s, cronBase.Add(4*time.Minute), everyMinute); len(runs) != 1 {
			t.Errorf("after the first run ended: claimed %d, want 1", len(runs))
		}
	}},
	{"overlap allow", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, overlapping(cronJob("a", cronBase)))
		n := len(claimCron(t, s, cronBase, everyMinute)) + len(claimCron(t, s, cronBase.Add(time.Minute), everyMinute))
		r := startManual(t, s, "a", "", time.Time{})
		if n != 2 || r.Status != store.RunRunning {
			t.Errorf("claimed %d and manual %s; want 2 and running", n, r.Status)
		}
	}},
	{"a repeated slot key fires once", func(t *testing.T, s store.CronStore) {
		// A plan like a naive DST fall-back: 01:30 comes twice, an hour
		// apart, with one wall-clock key.
		first := cronBase
		repeat := cronBase.Add(time.Hour)
		plan := store.CronPlan{Late: time.Minute, Next: func(j store.CronJob, after time.Time) (store.CronSlot, error) {
			if after.Before(repeat) {
				return store.CronSlot{At: repeat, Key: "2026-11-01T01:30:00"}, nil
			}
			at := after.Add(24 * time.Hour).Truncate(time.Hour)
			return store.CronSlot{At: at, Key: at.Format(time.RFC3339)}, nil
		}}
		j := overlapping(cronJob("a", first))
		j.NextSlot = "2026-11-01T01:30:00"
		addCronJob(t, s, j)
		if runs := claimCron(t, s, first, plan); len(runs) != 1 {
			t.Fatalf("first occurrence: %d runs, want 1", len(runs))
		}
		if got := getCronJob(t, s, "a"); !got.NextRun.Equal(repeat) {
			t.Fatalf("next %v, want the repeat %v", got.NextRun, repeat)
		}
		if runs := claimCron(t, s, repeat, plan); len(runs) != 0 {
			t.Errorf("repeat: %d runs, want none", len(runs))
		}
		if got := getCronJob(t, s, "a"); !got.NextRun.After(repeat) {
			t.Errorf("after the repeat: next %v, want it advanced", got.NextRun)
		}
		if hist := cronRuns(t, s, "a"); len(hist) != 1 {
			t.Errorf("history has %d runs, want 1", len(hist))
		}
	}},
	{"a failing plan stops the job", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("bad", cronBase))
		addCronJob(t, s, cronJob("good", cronBase))
		plan := store.CronPlan{Late: time.Minute, Next: func(j store.CronJob, after time.Time) (store.CronSlot, error) {
			if j.Name == "bad" {
				return store.CronSlot{}, errors.New("unknown time zone Mars/Olympus")
			}
			return everyMinute.Next(j, after)
		}}
		runs := claimCron(t, s, cronBase, plan)
		if len(runs) != 1 || runs[0].Job != "good" {
			t.Fatalf("runs %+v, want good's only", runs)
		}
		if j := getCronJob(t, s, "bad"); !j.NextRun.IsZero() {
			t.Errorf("bad's next run %v, want zero", j.NextRun)
		}
		hist := cronRuns(t, s, "bad")
		if len(hist) != 1 || hist[0].Status != store.RunFailed || !strings.Contains(hist[0].Error, "Mars/Olympus") {
			t.Errorf("bad's history %+v, want one failed run naming the cause", hist)
		}
		finishCron(t, s, runs[0].ID, store.RunSucceeded)
		if runs := claimCron(t, s, cronBase.Add(time.Hour), plan); len(runs) != 1 || runs[0].Job != "good" {
			t.Errorf("an hour later: %+v, want good's only", runs)
		}
	}},
	{"a plan that does not advance is refused", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		stuck := store.CronPlan{Late: time.Minute, Next: func(j store.CronJob, after time.Time) (store.CronSlot, error) {
			return store.CronSlot{At: cronBase, Key: "x"}, nil
		}}
		if runs := claimCron(t, s, cronBase, stuck); len(runs) != 0 {
			t.Errorf("%d runs, want none", len(runs))
		}
		if j := getCronJob(t, s, "a"); !j.NextRun.IsZero() {
			t.Errorf("next %v, want the job stopped", j.NextRun)
		}
	}},
	{"a plan that ends stops the job without error", func(t *testing.T, s store.CronStore) {
		addCronJob(t, s, cronJob("a", cronBase))
		end := store.CronPlan{Late: time.Minute, Next: func(store.CronJob, time.Time) (store.CronSlot, error) {
			return store.CronSlot{}, nil
		}}
		if runs := claimCron(t, s, cronBase, end); len(runs) != 1 {
			t.Fatalf("%d runs, want the last one", len(runs))
		}
		if j := getCronJob(t, s, "a"); !j.NextRun.IsZero() {
			t.Errorf("next %v, want zero", j.NextRun)
		}
	}},
	{"concurrent claimers claim each slot once", func(t *testing.T, s store.CronStore) {
		const jobs, claimers, minutes = 20, 8, 5
		for i := range jobs {
			addCronJob(t, s, overlapping(cronJob(fmt.Sprintf("j%02d", i), cronBase)))
		}
		var (
			mu   sync.Mutex
			seen = map[string]int{}
		)
		// Each minute, every claimer claims at once at the same time.
		for m := range minutes {
			now := cronBase.Add(time.Duration(m) * time.Minute)
			var wg sync.WaitGroup
			for c := range claimers {
				wg.Go(func() {
					runs, err := s.ClaimDue(t.Context(), now, fmt.Sprintf("host-%d", c), everyMinute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					for _, r := range runs {
						seen[r.Job+" "+r.Slot]++
					}
				})
			}
			wg.Wait()
		}
		if len(seen) != jobs*minutes {
			t.Errorf("%d distinct slots claimed, want %d", len(seen), jobs*minutes)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s claimed %d times", k, n)
			}
		}
	}},
	{"start manual and parent runs", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		j := overlapping(cronJob("a", cronBase))
		j.Enabled = false // an operator may run a disabled job
		addCronJob(t, s, j)
		at := cronBase.Add(time.Second).In(elsewhere)
		m := startManual(t, s, "a", "h", at)
		if m.Status != store.RunRunning || m.Trigger != store.TriggerManual || m.Slot != "" || !m.Scheduled.IsZero() || !m.Started.Equal(at) || m.Host != "h" {
			t.Errorf("manual run %+v", m)
		}
		p, err := s.StartCronRun(ctx, store.CronStart{Job: "a", Trigger: store.TriggerParent, Parent: "kanban:T1,run=R1", At: at})
		must(t, "StartCronRun parent", err)
		got, err := s.GetCronRun(ctx, p.ID)
		must(t, "GetCronRun", err)
		if got.Parent != "kanban:T1,run=R1" || got.Trigger != store.TriggerParent || got.Status != store.RunRunning {
			t.Errorf("parent run %+v", got)
		}
		if m.ID == p.ID {
			t.Error("two runs share an id")
		}
		before := time.Now()
		z := startManual(t, s, "a", "", time.Time{})
		aboutNow(t, "zero At: started", z.Started, before)
		for name, bad := range map[string]store.CronStart{
			"schedule trigger":      {Job: "a", Trigger: store.TriggerSchedule},
			"no trigger":            {Job: "a"},
			"parent without parent": {Job: "a", Trigger: store.TriggerParent},
			"manual with a parent":  {Job: "a", Trigger: store.TriggerManual, Parent: "cli"},
		} {
			if _, err := s.StartCronRun(ctx, bad); err == nil {
				t.Errorf("%s: no error", name)
			}
		}
	}},
	{"steps", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		addCronJob(t, s, cronJob("a", cronBase))
		r := startManual(t, s, "a", "", cronBase)
		big := strings.Repeat("é", store.CronOutputCap) // 2 bytes each
		in := []store.CronStep{
			{N: 7, Command: "echo hi", Verdict: "allow", Rule: "safe", ExitCode: 0, Output: "hi\n", Started: cronBase, Finished: cronBase.Add(time.Second)},
			{Command: "yes é | head", Verdict: "allow", Rule: "safe", ExitCode: 0, Output: "start" + big + "end", Started: cronBase, Finished: cronBase},
			{Command: "rm -rf /", Verdict: "deny", Rule: "hardline", ExitCode: -1, Output: "blocked", Started: cronBase.In(elsewhere), Finished: cronBase},
		}
		for i, st := range in {
			got, err := s.AppendCronStep(ctx, r.ID, st)
			must(t, "AppendCronStep", err)
			if got.N != i {
				t.Errorf("step %d: N = %d", i, got.N)
			}
		}
		got, err := s.GetCronRun(ctx, r.ID)
		must(t, "GetCronRun", err)
		if len(got.Steps) != 3 {
			t.Fatalf("%d steps, want 3", len(got.Steps))
		}
		st := got.Steps[0]
		if st.N != 0 || st.Command != "echo hi" || st.Output != "hi\n" || st.Verdict != "allow" || st.Rule != "safe" || !st.Finished.Equal(cronBase.Add(time.Second)) {
			t.Errorf("step 0: %+v", st)
		}
		out := got.Steps[1].Output
		if len(out) > store.CronOutputCap || !strings.HasPrefix(out, "startéé") || !strings.HasSuffix(out, "ééend") || !strings.Contains(out, "bytes of output omitted") {
			t.Errorf("capped output: %d bytes, head %q, tail %q", len(out), out[:min(len(out), 20)], out[max(0, len(out)-20):])
		}
		if !utf8.ValidString(out) {
			t.Error("capped output was cut inside a rune")
		}
		if d := got.Steps[2]; d.ExitCode != -1 || d.Verdict != "deny" || d.Output != "blocked" || !d.Started.Equal(cronBase) {
			t.Errorf("step 2: %+v", d)
		}
		finishCron(t, s, r.ID, store.RunFailed)
		if _, err := s.AppendCronStep(ctx, r.ID, in[0]); !errors.Is(err, store.ErrRunEnded) {
			t.Errorf("AppendCronStep after the end: %v, want ErrRunEnded", err)
		}
	}},
	{"finish ends a run once", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		addCronJob(t, s, cronJob("a", cronBase))
		r := startManual(t, s, "a", "", cronBase)
		for _, bad := range []store.RunStatus{store.RunRunning, store.RunSkipped, ""} {
			if _, err := s.FinishCronRun(ctx, r.ID, bad, cronBase, ""); err == nil || errors.Is(err, store.ErrRunEnded) {
				t.Errorf("FinishCronRun as %q: %v, want a refusal", bad, err)
			}
		}
		_, err := s.AppendCronStep(ctx, r.ID, store.CronStep{Command: "false", Verdict: "allow", Rule: "safe", ExitCode: 1, Started: cronBase, Finished: cronBase})
		must(t, "AppendCronStep", err)
		end := cronBase.Add(time.Minute).In(elsewhere)
		done, err := s.FinishCronRun(ctx, r.ID, store.RunFailed, end, "step 1 exited with status 1")
		must(t, "FinishCronRun", err)
		if done.Status != store.RunFailed || !done.Finished.Equal(end) || done.Error != "step 1 exited with status 1" || len(done.Steps) != 1 {
			t.Errorf("finished run %+v", done)
		}
		again, err := s.FinishCronRun(ctx, r.ID, store.RunSucceeded, end.Add(time.Hour), "")
		if !errors.Is(err, store.ErrRunEnded) {
			t.Fatalf("second FinishCronRun: %v, want ErrRunEnded", err)
		}
		if again.Status != store.RunFailed || !again.Finished.Equal(end) || len(again.Steps) != 1 {
			t.Errorf("the late finisher got %+v, want the run as it ended", again)
		}
		z := startManual(t, s, "a", "", cronBase)
		before := time.Now()
		zd, err := s.FinishCronRun(ctx, z.ID, store.RunSucceeded, time.Time{}, "")
		must(t, "FinishCronRun at zero time", err)
		aboutNow(t, "zero time: finished", zd.Finished, before)
	}},
	{"abandon the runs of other hosts", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		addCronJob(t, s, overlapping(cronJob("a", cronBase)))
		var ids []string
		for _, h := range []string{"old", "old", "new"} {
			ids = append(ids, startManual(t, s, "a", h, cronBase).ID)
		}
		finishCron(t, s, ids[1], store.RunSucceeded)
		n, err := s.AbandonCronRuns(ctx, "new", cronBase.Add(time.Hour), "host restarted")
		must(t, "AbandonCronRuns", err)
		if n != 1 {
			t.Errorf("abandoned %d, want 1", n)
		}
		want := map[string]store.RunStatus{ids[0]: store.RunFailed, ids[1]: store.RunSucceeded, ids[2]: store.RunRunning}
		for id, st := range want {
			r, err := s.GetCronRun(ctx, id)
			must(t, "GetCronRun", err)
			if r.Status != st {
				t.Errorf("run %s: %s, want %s", id, r.Status, st)
			}
			if id == ids[0] && (r.Error != "host restarted" || !r.Finished.Equal(cronBase.Add(time.Hour))) {
				t.Errorf("abandoned run %+v", r)
			}
		}
	}},
	{"list runs newest first", func(t *testing.T, s store.CronStore) {
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			addCronJob(t, s, overlapping(cronJob(name, cronBase)))
		}
		var want []string
		for i := range 6 {
			job := []string{"a", "b"}[i%2]
			// Two runs share a start time: insertion order breaks the tie.
			r := startManual(t, s, job, "", cronBase.Add(time.Duration(i/2)*time.Second))
			_, err := s.AppendCronStep(ctx, r.ID, store.CronStep{Command: fmt.Sprint("echo ", i), Verdict: "allow", Rule: "safe", Output: fmt.Sprint(i), Started: cronBase, Finished: cronBase})
			must(t, "AppendCronStep", err)
			want = append(want, r.ID)
		}
		slices.Reverse(want)
		ids := func(runs []store.CronRun) []string {
			var out []string
			for _, r := range runs {
				out = append(out, r.ID)
				if len(r.Steps) != 1 || r.Steps[0].Command == "" {
					t.Errorf("run %s steps %+v, want its one step", r.ID, r.Steps)
				}
			}
			return out
		}
		if got := ids(cronRuns(t, s, "")); !slices.Equal(got, want) {
			t.Errorf("all runs %v, want %v", got, want)
		}
		top, err := s.ListCronRuns(ctx, "", 2)
		must(t, "ListCronRuns limit", err)
		if got := ids(top); !slices.Equal(got, want[:2]) {
			t.Errorf("limit 2: %v, want %v", got, want[:2])
		}
		var wantA []string
		for i, id := range want {
			if i%2 == 1 { // reversed: a's runs sit at odd indexes
				wantA = append(wantA, id)
			}
		}
		if got := ids(cronRuns(t, s, "a")); !slices.Equal(got, wantA) {
			t.Errorf("a's runs %v, want %v", got, wantA)
		}
		if _, err := s.ListCronRuns(ctx, "", -1); err == nil {
			t.Error("negative limit: no error")
		}
	}},
}
