package sqlite

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

var _ store.CronStore = (*DB)(nil)

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// queryRows runs q on db and scans every row with scan; no rows is an
// empty slice.
func queryRows[T any](ctx context.Context, db querier, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return codec.Collect(rows, scan)
}

const cronJobCols = `name, schedule, tz, kind, steps, overlap, catch_up, enabled, next_run, next_slot, created`

func scanCronJob(sc scanner) (store.CronJob, error) {
	var (
		j                             store.CronJob
		kind, steps, overlap, catchUp string
		next                          sql.NullString
		created                       string
	)
	if err := sc.Scan(&j.Name, &j.Schedule, &j.TZ, &kind, &steps, &overlap, &catchUp, &j.Enabled, &next, &j.NextSlot, &created); err != nil {
		return store.CronJob{}, err
	}
	j.Kind, j.Overlap, j.CatchUp = store.CronKind(kind), store.Overlap(overlap), store.CatchUp(catchUp)
	var errs []error
	errs = append(errs, decJSON("steps", steps, &j.Steps))
	var err error
	j.NextRun, err = decOptTime(next)
	errs = append(errs, err)
	j.Created, err = decTime(created)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.CronJob{}, fmt.Errorf("cron job %s: %w", j.Name, err)
	}
	return j, nil
}

// AddCronJob stores a new job. It must pass CronJob.Validate; a name
// that is taken gives store.ErrJobExists.
func (db *DB) AddCronJob(ctx context.Context, j store.CronJob) error {
	if err := db.addCronJob(ctx, j); err != nil {
		return fmt.Errorf("add cron job %s: %w", j.Name, err)
	}
	return nil
}

func (db *DB) addCronJob(ctx context.Context, j store.CronJob) error {
	if err := j.Validate(); err != nil {
		return err
	}
	steps, err := encJSON("steps", j.Steps)
	if err != nil {
		return err
	}
	next, err := encOptTime(j.NextRun)
	if err != nil {
		return err
	}
	created, err := encTime(j.Created)
	if err != nil {
		return err
	}
	res, err := db.w.ExecContext(ctx, `INSERT INTO cron_jobs (`+cronJobCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		j.Name, j.Schedule, j.TZ, string(j.Kind), steps, string(j.Overlap), string(j.CatchUp), j.Enabled, next, j.NextSlot, created)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return store.ErrJobExists
	}
	return nil
}

// GetCronJob returns the job name, or store.ErrNotFound.
func (db *DB) GetCronJob(ctx context.Context, name string) (store.CronJob, error) {
	j, err := getCronJob(ctx, db.r, name)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("get cron job %s: %w", name, err)
	}
	return j, nil
}

func getCronJob(ctx context.Context, q querier, name string) (store.CronJob, error) {
	j, err := scanCronJob(q.QueryRowContext(ctx, `SELECT `+cronJobCols+` FROM cron_jobs WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	return j, err
}

// ListCronJobs lists every job by name.
func (db *DB) ListCronJobs(ctx context.Context) ([]store.CronJob, error) {
	out, err := queryRows(ctx, db.r, scanCronJob, `SELECT `+cronJobCols+` FROM cron_jobs ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list cron jobs: %w", err)
	}
	return out, nil
}

// DeleteCronJob removes the job and its runs; store.ErrNotFound for an
// unknown job, store.ErrJobBusy while one of its runs is running.
func (db *DB) DeleteCronJob(ctx context.Context, name string) error {
	if err := db.deleteCronJob(ctx, name); err != nil {
		return fmt.Errorf("delete cron job %s: %w", name, err)
	}
	return nil
}

func (db *DB) deleteCronJob(ctx context.Context, name string) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	busy, err := jobRunning(ctx, tx, name)
	if err != nil {
		return err
	}
	if busy {
		return store.ErrJobBusy
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM cron_jobs WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if err := oneRow(res); err != nil {
		return err
	}
	return tx.Commit()
}

func jobRunning(ctx context.Context, q querier, name string) (bool, error) {
	var busy bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM cron_runs WHERE job = ? AND status = 'running')`, name).Scan(&busy)
	return busy, err
}

// NextCronDue returns the earliest next run of the enabled jobs, or the
// zero time if none will fire.
func (db *DB) NextCronDue(ctx context.Context) (time.Time, error) {
	var s string
	err := db.r.QueryRowContext(ctx, `SELECT next_run FROM cron_jobs
		WHERE enabled = 1 AND next_run IS NOT NULL ORDER BY next_run LIMIT 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err == nil {
		var t time.Time
		if t, err = decTime(s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("next cron due: %w", err)
}

// ClaimDue implements store.CronStore: one immediate transaction reads
// the due jobs from the partial index, advances each and inserts its
// run, so two hosts on one file never claim a slot twice.
func (db *DB) ClaimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	runs, err := db.claimDue(ctx, now, host, plan)
	if err != nil {
		return nil, fmt.Errorf("claim due cron jobs: %w", err)
	}
	return runs, nil
}

func (db *DB) claimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	if plan.Next == nil {
		return nil, errors.New("plan has no Next")
	}
	at, err := encTime(now)
	if err != nil {
		return nil, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	jobs, err := queryRows(ctx, tx, scanCronJob, `SELECT `+cronJobCols+` FROM cron_jobs
		WHERE enabled = 1 AND next_run IS NOT NULL AND next_run <= ? ORDER BY next_run, name`, at)
	if err != nil {
		return nil, err
	}
	out := []store.CronRun{}
	for _, j := range jobs {
		r, ok, err := claimJob(ctx, tx, j, now, host, plan)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, tx.Commit()
}

// claimJob advances one due job and records its run; ok reports a run
// the caller must execute.
func claimJob(ctx context.Context, tx *sql.Tx, j store.CronJob, now time.Time, host string, plan store.CronPlan) (store.CronRun, bool, error) {
	r := store.CronRun{
		ID: ulid.Make().String(), Job: j.Name, Trigger: store.TriggerSchedule,
		Slot: j.NextSlot, Scheduled: j.NextRun, Started: now, Status: store.RunRunning, Host: host,
	}
	if r.Slot == "" {
		// A key is what de-duplicates; a job stored without one uses
		// its due time.
		r.Slot = j.NextRun.UTC().Format(time.RFC3339Nano)
	}
	next, perr := advance(j, now, plan)
	if perr != nil {
		// The job stops until someone fixes it; its history says why.
		if _, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET next_run = NULL, next_slot = '' WHERE name = ?`, j.Name); err != nil {
			return r, false, err
		}
		r.Status, r.Finished, r.Error = store.RunFailed, now, "schedule: "+perr.Error()
		_, err := insertRun(ctx, tx, r)
		return r, false, err
	}
	nextRun, err := encOptTime(next.At)
	if err != nil {
		return r, false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET next_run = ?, next_slot = ? WHERE name = ?`, nextRun, next.Key, j.Name); err != nil {
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
		busy, err := jobRunning(ctx, tx, j.Name)
		if err != nil {
			return r, false, err
		}
		if busy {
			r.Status, r.Finished, r.Error = store.RunSkipped, now, "skipped: the previous run is still running (overlap policy is skip)"
		}
	}
	inserted, err := insertRun(ctx, tx, r)
	if err != nil || !inserted {
		// Not inserted: this slot key already fired (a DST repeat).
		return r, false, err
	}
	return r, r.Status == store.RunRunning, nil
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

// insertRun inserts r unless its job already has a run for r.Slot; it
// reports whether it inserted.
func insertRun(ctx context.Context, q querier, r store.CronRun) (bool, error) {
	var slot any
	if r.Slot != "" {
		slot = r.Slot
	}
	scheduled, err := encOptTime(r.Scheduled)
	if err != nil {
		return false, err
	}
	started, err := encTime(r.Started)
	if err != nil {
		return false, err
	}
	finished, err := encOptTime(r.Finished)
	if err != nil {
		return false, err
	}
	res, err := q.ExecContext(ctx, `INSERT INTO cron_runs (`+cronRunCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job, slot) DO NOTHING`,
		r.ID, r.Job, string(r.Trigger), slot, scheduled, started, finished, string(r.Status), r.Parent, r.Host, r.Error)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

const cronRunCols = `id, job, started_by, slot, scheduled, started, finished, status, parent, host, error`

func scanCronRun(sc scanner) (store.CronRun, error) {
	var (
		r                         store.CronRun
		trigger, status, started  string
		slot, scheduled, finished sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.Job, &trigger, &slot, &scheduled, &started, &finished, &status, &r.Parent, &r.Host, &r.Error); err != nil {
		return store.CronRun{}, err
	}
	r.Trigger, r.Slot, r.Status = store.Trigger(trigger), slot.String, store.RunStatus(status)
	r.Steps = []store.CronStep{}
	var errs []error
	var err error
	r.Scheduled, err = decOptTime(scheduled)
	errs = append(errs, err)
	r.Started, err = decTime(started)
	errs = append(errs, err)
	r.Finished, err = decOptTime(finished)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.CronRun{}, fmt.Errorf("cron run %s: %w", r.ID, err)
	}
	return r, nil
}

// StartCronRun starts a manual or parent run now, or records it skipped
// under the job's overlap policy.
func (db *DB) StartCronRun(ctx context.Context, s store.CronStart) (store.CronRun, error) {
	r, err := db.startCronRun(ctx, s)
	if err != nil {
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: %w", s.Job, err)
	}
	return r, nil
}

func (db *DB) startCronRun(ctx context.Context, s store.CronStart) (store.CronRun, error) {
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
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.CronRun{}, err
	}
	defer tx.Rollback()
	j, err := getCronJob(ctx, tx, s.Job)
	if err != nil {
		return store.CronRun{}, err
	}
	r := store.CronRun{
		ID: ulid.Make().String(), Job: j.Name, Trigger: s.Trigger, Started: s.At,
		Status: store.RunRunning, Parent: s.Parent, Host: s.Host, Steps: []store.CronStep{},
	}
	if j.Overlap == store.OverlapSkip {
		busy, err := jobRunning(ctx, tx, j.Name)
		if err != nil {
			return store.CronRun{}, err
		}
		if busy {
			r.Status, r.Finished, r.Error = store.RunSkipped, s.At, "skipped: the previous run is still running (overlap policy is skip)"
		}
	}
	if _, err := insertRun(ctx, tx, r); err != nil {
		return store.CronRun{}, err
	}
	return r, tx.Commit()
}

const cronStepCols = `n, command, verdict, rule, exit_code, output, started, finished`

func scanCronStep(sc scanner) (store.CronStep, error) {
	st, _, err := scanCronStepOf(sc, false)
	return st, err
}

// scanCronStepOf scans a step, preceded by its run id when withRun.
func scanCronStepOf(sc scanner, withRun bool) (store.CronStep, string, error) {
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
	st.Started, err1 = decTime(started)
	st.Finished, err2 = decTime(finished)
	if err := errors.Join(err1, err2); err != nil {
		return store.CronStep{}, "", fmt.Errorf("cron step %s/%d: %w", run, st.N, err)
	}
	return st, run, nil
}

// AppendCronStep adds the run's next step, its output capped.
func (db *DB) AppendCronStep(ctx context.Context, runID string, st store.CronStep) (store.CronStep, error) {
	st, err := db.appendCronStep(ctx, runID, st)
	if err != nil {
		return store.CronStep{}, fmt.Errorf("append step to cron run %s: %w", runID, err)
	}
	return st, nil
}

func (db *DB) appendCronStep(ctx context.Context, runID string, st store.CronStep) (store.CronStep, error) {
	st.Output, _ = store.CapOutput(st.Output)
	started, err := encTime(st.Started)
	if err != nil {
		return store.CronStep{}, err
	}
	finished, err := encTime(st.Finished)
	if err != nil {
		return store.CronStep{}, err
	}
	// Through the committer: a burst of runs shares its commits (group
	// commit), at synchronous=NORMAL unless a durable write shares the
	// batch. The step's decision is already durable in the audit log.
	err = db.submit(ctx, false, func(ctx context.Context, tx *wtx, _ *chain) error {
		var status string
		err := tx.QueryRowContext(ctx, `SELECT status FROM cron_runs WHERE id = ?`, runID).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return err
		case store.RunStatus(status) != store.RunRunning:
			return fmt.Errorf("%w (it is %s)", store.ErrRunEnded, status)
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(n) + 1, 0) FROM cron_steps WHERE run = ?`, runID).Scan(&st.N); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO cron_steps (run, `+cronStepCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, st.N, st.Command, st.Verdict, st.Rule, st.ExitCode, st.Output, started, finished)
		return err
	})
	if err != nil {
		return store.CronStep{}, err
	}
	return st, nil
}

// FinishCronRun ends a running run with one UPDATE … WHERE status =
// 'running' RETURNING.
func (db *DB) FinishCronRun(ctx context.Context, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	r, err := db.finishCronRun(ctx, runID, status, at, msg)
	if err != nil {
		if errors.Is(err, store.ErrRunEnded) {
			return r, fmt.Errorf("finish cron run %s: %w (it is %s)", runID, err, r.Status)
		}
		return store.CronRun{}, fmt.Errorf("finish cron run %s: %w", runID, err)
	}
	return r, nil
}

func (db *DB) finishCronRun(ctx context.Context, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	if status != store.RunSucceeded && status != store.RunFailed {
		return store.CronRun{}, fmt.Errorf("status %q: a run ends %s or %s", status, store.RunSucceeded, store.RunFailed)
	}
	if at.IsZero() {
		at = time.Now()
	}
	end, err := encTime(at)
	if err != nil {
		return store.CronRun{}, err
	}
	// Through the committer, as AppendCronStep. A run that had ended
	// already changes nothing: its op returns errEnded after reading it.
	var r store.CronRun
	err = db.submit(ctx, false, func(ctx context.Context, tx *wtx, _ *chain) error {
		var err error
		r, err = scanCronRun(tx.QueryRowContext(ctx, `UPDATE cron_runs SET status = ?, finished = ?, error = ?
			WHERE id = ? AND status = 'running' RETURNING `+cronRunCols, string(status), end, msg, runID))
		ended := false
		if errors.Is(err, sql.ErrNoRows) {
			ended = true
			r, err = scanCronRun(tx.QueryRowContext(ctx, `SELECT `+cronRunCols+` FROM cron_runs WHERE id = ?`, runID))
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			}
		}
		if err != nil {
			return err
		}
		if r.Steps, err = queryRows(ctx, tx, scanCronStep, `SELECT `+cronStepCols+` FROM cron_steps WHERE run = ? ORDER BY n`, runID); err != nil {
			return err
		}
		if ended {
			return store.ErrRunEnded
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrRunEnded):
		return r, err
	case err != nil:
		return store.CronRun{}, err
	}
	return r, nil
}

// AbandonCronRuns fails the running runs of hosts other than keep.
func (db *DB) AbandonCronRuns(ctx context.Context, keep string, at time.Time, reason string) (int, error) {
	if at.IsZero() {
		at = time.Now()
	}
	end, err := encTime(at)
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE cron_runs SET status = 'failed', finished = ?, error = ?
		WHERE status = 'running' AND host <> ?`, end, reason, keep)
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	return int(n), nil
}

// GetCronRun returns a run with its steps, or store.ErrNotFound.
func (db *DB) GetCronRun(ctx context.Context, id string) (store.CronRun, error) {
	r, err := db.getCronRun(ctx, id)
	if err != nil {
		return store.CronRun{}, fmt.Errorf("get cron run %s: %w", id, err)
	}
	return r, nil
}

func (db *DB) getCronRun(ctx context.Context, id string) (store.CronRun, error) {
	// One read transaction, so the steps belong to the run as read.
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.CronRun{}, err
	}
	defer tx.Rollback()
	r, err := scanCronRun(tx.QueryRowContext(ctx, `SELECT `+cronRunCols+` FROM cron_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.CronRun{}, store.ErrNotFound
	}
	if err != nil {
		return store.CronRun{}, err
	}
	if r.Steps, err = queryRows(ctx, tx, scanCronStep, `SELECT `+cronStepCols+` FROM cron_steps WHERE run = ? ORDER BY n`, id); err != nil {
		return store.CronRun{}, err
	}
	return r, nil
}

// ListCronRuns lists runs with their steps, newest first.
func (db *DB) ListCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	runs, err := db.listCronRuns(ctx, job, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of cron job %q: %w", job, err)
	}
	return runs, nil
}

func (db *DB) listCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	if limit < 0 {
		return nil, fmt.Errorf("negative limit %d", limit)
	}
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	var where string
	args := []any{}
	if job != "" {
		where = `WHERE job = ?`
		args = append(args, job)
	}
	sel := `SELECT id FROM cron_runs ` + where + ` ORDER BY started DESC, rowid DESC LIMIT ?`
	args = append(args, limit)
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	runs, err := queryRows(ctx, tx, scanCronRun, `SELECT `+cronRunCols+` FROM cron_runs WHERE id IN (`+sel+`)
		ORDER BY started DESC, rowid DESC`, args...)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return runs, nil
	}
	byID := make(map[string]*store.CronRun, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	rows, err := tx.QueryContext(ctx, `SELECT run, `+cronStepCols+` FROM cron_steps WHERE run IN (`+sel+`) ORDER BY run, n`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		st, run, err := scanCronStepOf(rows, true)
		if err != nil {
			return nil, err
		}
		if r := byID[run]; r != nil {
			r.Steps = append(r.Steps, st)
		}
	}
	return runs, rows.Err()
}
