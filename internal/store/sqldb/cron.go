package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

// The cron store (store.CronStore). Where the engines differ: a claim
// on PostgreSQL locks the due jobs' rows and skips those another host
// is claiming (Dialect.SkipLocked), in batches; on SQLite one immediate
// transaction holds the file, and claims every due job. SQLite appends
// steps and finishes runs through its committer (AppendCronStepVia,
// FinishCronRunVia).

// WriteFunc runs fn in a write transaction that commits when fn returns
// nil: Base's own, or a backend's faster one (SQLite's committer). fn
// runs its statements with the ctx it is given, which may not be the
// caller's: a committer's op must not be cut short by one caller.
type WriteFunc func(ctx context.Context, fn func(ctx context.Context, tx Q) error) error

// claimBatch bounds the jobs one ClaimDue takes where hosts claim side
// by side (Dialect.SkipLocked), so that a burst of due jobs is shared
// among the hosts and the first runs start while the rest are still
// being claimed: the scheduler calls ClaimDue again at once while a job
// is due (store.CronStore allows batches).
const claimBatch = 100

// skipOverlap is the error of a run skipped under overlap policy skip.
const skipOverlap = "skipped: the previous run is still running (overlap policy is skip)"

const cronJobCols = `name, schedule, tz, kind, steps, overlap, catch_up, enabled, next_run, next_slot, created`

func scanCronJob(sc codec.Scanner) (store.CronJob, error) {
	var (
		j                             store.CronJob
		kind, steps, overlap, catchUp string
		next                          *string
		created                       string
	)
	if err := sc.Scan(&j.Name, &j.Schedule, &j.TZ, &kind, &steps, &overlap, &catchUp, &j.Enabled, &next, &j.NextSlot, &created); err != nil {
		return store.CronJob{}, err
	}
	j.Kind, j.Overlap, j.CatchUp = store.CronKind(kind), store.Overlap(overlap), store.CatchUp(catchUp)
	var errs [3]error
	errs[0] = codec.ParseJSON("steps", steps, &j.Steps)
	j.NextRun, errs[1] = codec.ParseOptTime(next)
	j.Created, errs[2] = codec.ParseTime(created)
	if err := errors.Join(errs[:]...); err != nil {
		return store.CronJob{}, fmt.Errorf("cron job %s: %w", j.Name, err)
	}
	return j, nil
}

// AddCronJob stores a new job. It must pass CronJob.Validate; a name
// that is taken gives store.ErrJobExists.
func (b *Base) AddCronJob(ctx context.Context, j store.CronJob) error {
	if err := b.addCronJob(ctx, j); err != nil {
		return fmt.Errorf("add cron job %s: %w", j.Name, err)
	}
	return nil
}

func (b *Base) addCronJob(ctx context.Context, j store.CronJob) error {
	if err := j.Validate(); err != nil {
		return err
	}
	steps, err1 := codec.JSON("steps", j.Steps)
	next, err2 := codec.OptTime(j.NextRun)
	created, err3 := codec.Time(j.Created)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	// In a transaction rather than on b.w: a backend refuses those while
	// it is faulted.
	return b.inTx(ctx, TxWrite, func(tx Q) error {
		n, err := tx.Exec(ctx, `INSERT INTO cron_jobs (`+cronJobCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			j.Name, j.Schedule, j.TZ, string(j.Kind), steps, string(j.Overlap), string(j.CatchUp), j.Enabled, next, j.NextSlot, created)
		if err == nil && n == 0 {
			err = store.ErrJobExists
		}
		return err
	})
}

// GetCronJob returns the job name, or store.ErrNotFound.
func (b *Base) GetCronJob(ctx context.Context, name string) (store.CronJob, error) {
	j, err := getCronJob(ctx, b.r, name, "")
	if err != nil {
		return store.CronJob{}, fmt.Errorf("get cron job %s: %w", name, b.note(err))
	}
	return j, nil
}

// getCronJob reads the job name, its row locked for the transaction
// when lock is Dialect.ForUpdate.
func getCronJob(ctx context.Context, q Q, name, lock string) (store.CronJob, error) {
	j, err := scanCronJob(q.QueryRow(ctx, `SELECT `+cronJobCols+` FROM cron_jobs WHERE name = ?`+lock, name))
	return j, notFound(err)
}

// ListCronJobs lists every job by name.
func (b *Base) ListCronJobs(ctx context.Context) ([]store.CronJob, error) {
	out, err := QueryRows(ctx, b.r, scanCronJob, `SELECT `+cronJobCols+` FROM cron_jobs ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list cron jobs: %w", b.note(err))
	}
	return out, nil
}

// DeleteCronJob removes the job and its runs; store.ErrNotFound for an
// unknown job, store.ErrJobBusy while one of its runs is running. The
// job's row is locked first, so that no host starts a run of it between
// the check and the delete.
func (b *Base) DeleteCronJob(ctx context.Context, name string) error {
	err := b.inTx(ctx, TxWrite, func(tx Q) error {
		if _, err := getCronJob(ctx, tx, name, b.d.ForUpdate); err != nil {
			return err
		}
		busy, err := jobRunning(ctx, tx, name)
		if err != nil {
			return err
		}
		if busy {
			return store.ErrJobBusy
		}
		_, err = tx.Exec(ctx, `DELETE FROM cron_jobs WHERE name = ?`, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete cron job %s: %w", name, err)
	}
	return nil
}

func jobRunning(ctx context.Context, q Q, name string) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cron_runs WHERE job = ? AND status = 'running')`, name).Scan(&busy)
	return busy, err
}

// dueJobs is the condition of the jobs that will fire, as the partial
// index cron_jobs_due spells it (so that the engine uses the index).
func (b *Base) dueJobs() string {
	return `enabled = ` + b.d.True + ` AND next_run IS NOT NULL`
}

// NextCronDue returns the earliest next run of the enabled jobs, or the
// zero time if none will fire.
func (b *Base) NextCronDue(ctx context.Context) (time.Time, error) {
	var s string
	err := b.r.QueryRow(ctx, `SELECT next_run FROM cron_jobs WHERE `+b.dueJobs()+` ORDER BY next_run LIMIT 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err == nil {
		var t time.Time
		if t, err = codec.ParseTime(s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("next cron due: %w", b.note(err))
}

// ClaimDue implements store.CronStore: one transaction reads the due
// jobs from the partial index, advances each and inserts its run under
// UNIQUE (job, slot), so a slot fires once whichever host claims it.
// Where rows are locked one by one (PostgreSQL), it locks up to
// claimBatch due jobs and skips those another host is claiming; where a
// write transaction holds the whole database (SQLite), it claims them
// all.
func (b *Base) ClaimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	runs, err := b.claimDue(ctx, now, host, plan)
	if err != nil {
		return nil, fmt.Errorf("claim due cron jobs: %w", err)
	}
	return runs, nil
}

func (b *Base) claimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	if plan.Next == nil {
		return nil, errors.New("plan has no Next")
	}
	at, err := codec.Time(now)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + cronJobCols + ` FROM cron_jobs WHERE ` + b.dueJobs() + ` AND next_run <= ? ORDER BY next_run, name`
	args := []any{at}
	if b.d.SkipLocked != "" {
		q += ` LIMIT ?` + b.d.SkipLocked
		args = append(args, claimBatch)
	}
	out := []store.CronRun{}
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		jobs, err := QueryRows(ctx, tx, scanCronJob, q, args...)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			r, ok, err := claimJob(ctx, tx, j, now, host, plan)
			if err != nil {
				return fmt.Errorf("job %s: %w", j.Name, err)
			}
			if ok {
				out = append(out, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimJob advances one due job and records its run; ok reports a run
// the caller must execute.
func claimJob(ctx context.Context, tx Q, j store.CronJob, now time.Time, host string, plan store.CronPlan) (store.CronRun, bool, error) {
	r := store.CronRun{
		ID: ulid.Make().String(), Job: j.Name, Trigger: store.TriggerSchedule,
		Slot: j.NextSlot, Scheduled: j.NextRun, Started: now, Status: store.RunRunning, Host: host, Steps: []store.CronStep{},
	}
	if r.Slot == "" {
		// A key is what de-duplicates; a job stored without one uses
		// its due time.
		r.Slot = j.NextRun.UTC().Format(time.RFC3339Nano)
	}
	next, perr := advance(j, now, plan)
	if perr != nil {
		// The job stops until someone fixes it; its history says why.
		if _, err := tx.Exec(ctx, `UPDATE cron_jobs SET next_run = NULL, next_slot = '' WHERE name = ?`, j.Name); err != nil {
			return r, false, err
		}
		r.Status, r.Finished, r.Error = store.RunFailed, now, "schedule: "+perr.Error()
		_, err := insertRun(ctx, tx, r)
		return r, false, err
	}
	nextRun, err := codec.OptTime(next.At)
	if err != nil {
		return r, false, err
	}
	if _, err := tx.Exec(ctx, `UPDATE cron_jobs SET next_run = ?, next_slot = ? WHERE name = ?`, nextRun, next.Key, j.Name); err != nil {
		return r, false, err
	}
	if late := now.Sub(j.NextRun); late > plan.Late {
		r.Trigger = store.TriggerCatchUp
		if j.CatchUp == store.CatchUpSkip {
			r.Status, r.Finished = store.RunSkipped, now
			r.Error = fmt.Sprintf("missed: due %s, no scheduler ran until %s later; catch-up policy is skip",
				j.NextRun.UTC().Format(time.RFC3339), late.Round(time.Second))
		}
	}
	if r.Status == store.RunRunning && j.Overlap == store.OverlapSkip {
		if err := skipIfRunning(ctx, tx, &r, now); err != nil {
			return r, false, err
		}
	}
	inserted, err := insertRun(ctx, tx, r)
	if err != nil || !inserted {
		// Not inserted: this slot key already fired (a DST repeat).
		return r, false, err
	}
	return r, r.Status == store.RunRunning, nil
}

// skipIfRunning records r skipped at now when a run of its job is
// running (the job's overlap policy is skip).
func skipIfRunning(ctx context.Context, tx Q, r *store.CronRun, now time.Time) error {
	busy, err := jobRunning(ctx, tx, r.Job)
	if busy {
		r.Status, r.Finished, r.Error = store.RunSkipped, now, skipOverlap
	}
	return err
}

// advance returns the job's next slot after the claimed one and after
// now: every slot up to now is covered by this one claim.
func advance(j store.CronJob, now time.Time, plan store.CronPlan) (store.CronSlot, error) {
	next, err := plan.Next(j, j.NextRun)
	if err != nil {
		return store.CronSlot{}, err
	}
	if !next.At.IsZero() && !next.At.After(now) {
		if next, err = plan.Next(j, now); err != nil {
			return store.CronSlot{}, err
		}
	}
	if !next.At.IsZero() && (!next.At.After(j.NextRun) || !next.At.After(now)) {
		return store.CronSlot{}, fmt.Errorf("next slot %s is not after %s", next.At.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	return next, nil
}

const cronRunCols = `id, job, started_by, slot, scheduled, started, finished, status, parent, host, error`

// insertRun inserts r unless its job already has a run for r.Slot; it
// reports whether it inserted.
func insertRun(ctx context.Context, q Q, r store.CronRun) (bool, error) {
	var slot any // NULL for a run outside the schedule: no key to de-duplicate
	if r.Slot != "" {
		slot = r.Slot
	}
	scheduled, err1 := codec.OptTime(r.Scheduled)
	started, err2 := codec.Time(r.Started)
	finished, err3 := codec.OptTime(r.Finished)
	if err := errors.Join(err1, err2, err3); err != nil {
		return false, err
	}
	n, err := q.Exec(ctx, `INSERT INTO cron_runs (`+cronRunCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job, slot) DO NOTHING`,
		r.ID, r.Job, string(r.Trigger), slot, scheduled, started, finished, string(r.Status), r.Parent, r.Host, r.Error)
	return n == 1, err
}

func scanCronRun(sc codec.Scanner) (store.CronRun, error) {
	var (
		r                         store.CronRun
		trigger, status, started  string
		slot, scheduled, finished *string
	)
	if err := sc.Scan(&r.ID, &r.Job, &trigger, &slot, &scheduled, &started, &finished, &status, &r.Parent, &r.Host, &r.Error); err != nil {
		return store.CronRun{}, err
	}
	r.Trigger, r.Status = store.Trigger(trigger), store.RunStatus(status)
	if slot != nil {
		r.Slot = *slot
	}
	r.Steps = []store.CronStep{}
	var errs [3]error
	r.Scheduled, errs[0] = codec.ParseOptTime(scheduled)
	r.Started, errs[1] = codec.ParseTime(started)
	r.Finished, errs[2] = codec.ParseOptTime(finished)
	if err := errors.Join(errs[:]...); err != nil {
		return store.CronRun{}, fmt.Errorf("cron run %s: %w", r.ID, err)
	}
	return r, nil
}

// StartCronRun starts a manual or parent run now, or records it skipped
// under the job's overlap policy. The job's row is locked (where the
// engine locks rows), so two hosts starting runs of a skip job at once
// start one.
func (b *Base) StartCronRun(ctx context.Context, s store.CronStart) (store.CronRun, error) {
	r, err := b.startCronRun(ctx, s)
	if err != nil {
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: %w", s.Job, err)
	}
	return r, nil
}

func (b *Base) startCronRun(ctx context.Context, s store.CronStart) (store.CronRun, error) {
	switch {
	case s.Trigger == store.TriggerManual && s.Parent != "":
		return store.CronRun{}, errors.New("a manual run has no parent")
	case s.Trigger == store.TriggerParent && s.Parent == "":
		return store.CronRun{}, errors.New("a parent run needs its parent")
	case s.Trigger != store.TriggerManual && s.Trigger != store.TriggerParent:
		return store.CronRun{}, fmt.Errorf("trigger %q: want %q or %q", s.Trigger, store.TriggerManual, store.TriggerParent)
	}
	if s.At.IsZero() {
		s.At = time.Now()
	}
	var r store.CronRun
	err := b.inTx(ctx, TxWrite, func(tx Q) error {
		j, err := getCronJob(ctx, tx, s.Job, b.d.ForUpdate)
		if err != nil {
			return err
		}
		r = store.CronRun{
			ID: ulid.Make().String(), Job: j.Name, Trigger: s.Trigger, Started: s.At,
			Status: store.RunRunning, Parent: s.Parent, Host: s.Host, Steps: []store.CronStep{},
		}
		if j.Overlap == store.OverlapSkip {
			if err := skipIfRunning(ctx, tx, &r, s.At); err != nil {
				return err
			}
		}
		_, err = insertRun(ctx, tx, r)
		return err
	})
	return r, err
}

const cronStepCols = `n, command, verdict, rule, exit_code, output, started, finished`

func scanCronStep(sc codec.Scanner) (store.CronStep, error) {
	st, _, err := scanCronStepOf(sc, false)
	return st, err
}

// scanCronStepOf scans a step, preceded by its run id when withRun.
func scanCronStepOf(sc codec.Scanner, withRun bool) (store.CronStep, string, error) {
	var (
		st                store.CronStep
		run               string
		started, finished string
	)
	dest := []any{&st.N, &st.Command, &st.Verdict, &st.Rule, &st.ExitCode, &st.Output, &started, &finished}
	if withRun {
		dest = append([]any{&run}, dest...)
	}
	if err := sc.Scan(dest...); err != nil {
		return store.CronStep{}, "", err
	}
	var err1, err2 error
	st.Started, err1 = codec.ParseTime(started)
	st.Finished, err2 = codec.ParseTime(finished)
	if err := errors.Join(err1, err2); err != nil {
		return store.CronStep{}, "", fmt.Errorf("cron step %s/%d: %w", run, st.N, err)
	}
	return st, run, nil
}

// write runs fn in one of b's write transactions (a WriteFunc).
func (b *Base) write(ctx context.Context, fn func(ctx context.Context, tx Q) error) error {
	return b.tx(ctx, TxWrite, func(tx Q) error { return fn(ctx, tx) })
}

// AppendCronStep adds the run's next step, its output capped, in a
// write transaction.
func (b *Base) AppendCronStep(ctx context.Context, runID string, st store.CronStep) (store.CronStep, error) {
	return b.AppendCronStepVia(ctx, b.write, runID, st)
}

// AppendCronStepVia is AppendCronStep run by write. The run's row is
// locked (where the engine locks rows) while the step is numbered.
func (b *Base) AppendCronStepVia(ctx context.Context, write WriteFunc, runID string, st store.CronStep) (store.CronStep, error) {
	st, err := b.appendCronStep(ctx, write, runID, st)
	if err != nil {
		return store.CronStep{}, fmt.Errorf("append step to cron run %s: %w", runID, err)
	}
	return st, nil
}

func (b *Base) appendCronStep(ctx context.Context, write WriteFunc, runID string, st store.CronStep) (store.CronStep, error) {
	st.Output, _ = store.CapOutput(st.Output)
	started, err1 := codec.Time(st.Started)
	finished, err2 := codec.Time(st.Finished)
	if err := errors.Join(err1, err2); err != nil {
		return store.CronStep{}, err
	}
	err := write(ctx, func(ctx context.Context, tx Q) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM cron_runs WHERE id = ?`+b.d.ForUpdate, runID).Scan(&status)
		switch {
		case err != nil:
			return notFound(err)
		case store.RunStatus(status) != store.RunRunning:
			return fmt.Errorf("%w (it is %s)", store.ErrRunEnded, status)
		}
		return tx.QueryRow(ctx, `INSERT INTO cron_steps (run, `+cronStepCols+`)
			VALUES (?, (SELECT coalesce(max(n) + 1, 0) FROM cron_steps WHERE run = ?), ?, ?, ?, ?, ?, ?, ?)
			RETURNING n`, runID, runID, st.Command, st.Verdict, st.Rule, st.ExitCode, st.Output, started, finished).Scan(&st.N)
	})
	if err != nil {
		return store.CronStep{}, b.note(err)
	}
	return st, nil
}

// FinishCronRun ends a running run with one UPDATE … WHERE status =
// 'running' RETURNING, in a write transaction.
func (b *Base) FinishCronRun(ctx context.Context, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	return b.FinishCronRunVia(ctx, b.write, runID, status, at, msg)
}

// FinishCronRunVia is FinishCronRun run by write. A run that had ended
// already changes nothing: the late finisher gets store.ErrRunEnded
// with the run as it ended.
func (b *Base) FinishCronRunVia(ctx context.Context, write WriteFunc, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	r, ended, err := b.finishCronRun(ctx, write, runID, status, at, msg)
	switch {
	case err != nil:
		return store.CronRun{}, fmt.Errorf("finish cron run %s: %w", runID, err)
	case ended:
		return r, fmt.Errorf("finish cron run %s: %w (it is %s)", runID, store.ErrRunEnded, r.Status)
	}
	return r, nil
}

func (b *Base) finishCronRun(ctx context.Context, write WriteFunc, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, bool, error) {
	if status != store.RunSucceeded && status != store.RunFailed {
		return store.CronRun{}, false, fmt.Errorf("status %q: a run ends %s or %s", status, store.RunSucceeded, store.RunFailed)
	}
	if at.IsZero() {
		at = time.Now()
	}
	end, err := codec.Time(at)
	if err != nil {
		return store.CronRun{}, false, err
	}
	var (
		r     store.CronRun
		ended bool
	)
	err = write(ctx, func(ctx context.Context, tx Q) error {
		var err error
		r, err = scanCronRun(tx.QueryRow(ctx, `UPDATE cron_runs SET status = ?, finished = ?, error = ?
			WHERE id = ? AND status = 'running' RETURNING `+cronRunCols, string(status), end, msg, runID))
		ended = errors.Is(err, sql.ErrNoRows)
		if ended {
			r, err = cronRun(ctx, tx, runID)
		}
		if err != nil {
			return notFound(err)
		}
		r.Steps, err = cronSteps(ctx, tx, runID)
		return err
	})
	return r, ended, b.note(err)
}

// AbandonCronRuns fails the running runs of hosts other than keep.
func (b *Base) AbandonCronRuns(ctx context.Context, keep string, at time.Time, reason string) (int, error) {
	n, err := b.abandonCronRuns(ctx, keep, at, reason)
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	return int(n), nil
}

func (b *Base) abandonCronRuns(ctx context.Context, keep string, at time.Time, reason string) (int64, error) {
	if at.IsZero() {
		at = time.Now()
	}
	end, err := codec.Time(at)
	if err != nil {
		return 0, err
	}
	var n int64
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		n, err = tx.Exec(ctx, `UPDATE cron_runs SET status = 'failed', finished = ?, error = ?
			WHERE status = 'running' AND host <> ?`, end, reason, keep)
		return err
	})
	return n, err
}

// cronRun reads run id without its steps.
func cronRun(ctx context.Context, q Q, id string) (store.CronRun, error) {
	return scanCronRun(q.QueryRow(ctx, `SELECT `+cronRunCols+` FROM cron_runs WHERE id = ?`, id))
}

// cronSteps reads run id's steps in order.
func cronSteps(ctx context.Context, q Q, id string) ([]store.CronStep, error) {
	return QueryRows(ctx, q, scanCronStep, `SELECT `+cronStepCols+` FROM cron_steps WHERE run = ? ORDER BY n`, id)
}

// GetCronRun returns a run with its steps, or store.ErrNotFound. One
// read transaction, so the steps belong to the run as read.
func (b *Base) GetCronRun(ctx context.Context, id string) (store.CronRun, error) {
	var r store.CronRun
	err := b.inTx(ctx, TxRead, func(tx Q) error {
		var err error
		if r, err = cronRun(ctx, tx, id); err != nil {
			return notFound(err)
		}
		r.Steps, err = cronSteps(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.CronRun{}, fmt.Errorf("get cron run %s: %w", id, err)
	}
	return r, nil
}

// ListCronRuns lists runs with their steps, newest first (the later
// inserted first among runs started at one time), in one read
// transaction.
func (b *Base) ListCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	runs, err := b.listCronRuns(ctx, job, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of cron job %q: %w", job, err)
	}
	return runs, nil
}

func (b *Base) listCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	if limit < 0 {
		return nil, fmt.Errorf("negative limit %d", limit)
	}
	order := ` ORDER BY started DESC, ` + b.d.Ord + ` DESC`
	sel, args := `SELECT id FROM cron_runs`, []any{}
	if job != "" {
		sel += ` WHERE job = ?`
		args = append(args, job)
	}
	sel += order
	if limit > 0 {
		sel += ` LIMIT ?`
		args = append(args, limit)
	}
	var runs []store.CronRun
	err := b.inTx(ctx, TxRead, func(tx Q) error {
		var err error
		runs, err = QueryRows(ctx, tx, scanCronRun, `SELECT `+cronRunCols+` FROM cron_runs WHERE id IN (`+sel+`)`+order, args...)
		if err != nil || len(runs) == 0 {
			return err
		}
		byID := make(map[string]*store.CronRun, len(runs))
		for i := range runs {
			byID[runs[i].ID] = &runs[i]
		}
		rows, err := tx.Query(ctx, `SELECT run, `+cronStepCols+` FROM cron_steps WHERE run IN (`+sel+`) ORDER BY run, n`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			st, run, err := scanCronStepOf(rows, true)
			if err != nil {
				return err
			}
			if r := byID[run]; r != nil {
				r.Steps = append(r.Steps, st)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}
