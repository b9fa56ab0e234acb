package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const cronJobCols = `name, schedule, tz, kind, steps, overlap, catch_up, enabled, next_run, next_slot, created`

func scanCronJob(sc scanner) (store.CronJob, error) {
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

// AddCronJob stores a new job; a taken name gives store.ErrJobExists.
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
	steps, err := codec.JSON("steps", j.Steps)
	if err != nil {
		return err
	}
	next, err := codec.OptTime(j.NextRun)
	if err != nil {
		return err
	}
	created, err := codec.Time(j.Created)
	if err != nil {
		return err
	}
	n, err := db.execN(ctx, `INSERT INTO cron_jobs (`+cronJobCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (name) DO NOTHING`,
		j.Name, j.Schedule, j.TZ, string(j.Kind), steps, string(j.Overlap), string(j.CatchUp), j.Enabled, next, j.NextSlot, created)
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrJobExists
	}
	return nil
}

// GetCronJob returns the job name, or store.ErrNotFound.
func (db *DB) GetCronJob(ctx context.Context, name string) (store.CronJob, error) {
	j, err := getCronJob(ctx, db.pool, name, false)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("get cron job %s: %w", name, db.noteConn(err))
	}
	return j, nil
}

func getCronJob(ctx context.Context, q querier, name string, lock bool) (store.CronJob, error) {
	sql := `SELECT ` + cronJobCols + ` FROM cron_jobs WHERE name = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	j, err := scanCronJob(q.QueryRow(ctx, sql, name))
	if noRows(err) {
		err = store.ErrNotFound
	}
	return j, err
}

// ListCronJobs lists every job by name.
func (db *DB) ListCronJobs(ctx context.Context) ([]store.CronJob, error) {
	out, err := queryRows(ctx, db.pool, scanCronJob, `SELECT `+cronJobCols+` FROM cron_jobs ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list cron jobs: %w", db.noteConn(err))
	}
	return out, nil
}

// DeleteCronJob removes the job and its runs; store.ErrNotFound for an
// unknown job, store.ErrJobBusy while one of its runs is running.
func (db *DB) DeleteCronJob(ctx context.Context, name string) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := getCronJob(ctx, tx, name, true); err != nil {
			return err
		}
		busy, err := jobRunning(ctx, tx, name)
		if err != nil {
			return err
		}
		if busy {
			return store.ErrJobBusy
		}
		_, err = tx.Exec(ctx, `DELETE FROM cron_jobs WHERE name = $1`, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete cron job %s: %w", name, err)
	}
	return nil
}

func jobRunning(ctx context.Context, q querier, name string) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cron_runs WHERE job = $1 AND status = 'running')`, name).Scan(&busy)
	return busy, err
}

// NextCronDue returns the earliest next run of the enabled jobs, or the
// zero time if none will fire.
func (db *DB) NextCronDue(ctx context.Context) (time.Time, error) {
	var s string
	err := db.pool.QueryRow(ctx, `SELECT next_run FROM cron_jobs
		WHERE enabled AND next_run IS NOT NULL ORDER BY next_run LIMIT 1`).Scan(&s)
	if noRows(err) {
		return time.Time{}, nil
	}
	if err == nil {
		var t time.Time
		if t, err = codec.ParseTime(s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("next cron due: %w", db.noteConn(err))
}

// claimBatch bounds the jobs one ClaimDue takes, so that a burst of
// due jobs is shared among the hosts and the first runs start while the
// rest are still being claimed: the scheduler calls ClaimDue again at
// once while a job is due (store.CronStore allows batches).
const claimBatch = 100

// ClaimDue implements store.CronStore across hosts: one transaction
// locks up to claimBatch due jobs FOR UPDATE SKIP LOCKED (jobs another
// host is claiming are left to it), advances each and inserts its run
// under UNIQUE (job, slot), so a slot fires once whichever host claims
// it.
func (db *DB) ClaimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	if plan.Next == nil {
		return nil, errors.New("claim due cron jobs: plan has no Next")
	}
	at, err := codec.Time(now)
	if err != nil {
		return nil, fmt.Errorf("claim due cron jobs: %w", err)
	}
	out := []store.CronRun{}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		jobs, err := queryRows(ctx, tx, scanCronJob, `SELECT `+cronJobCols+` FROM cron_jobs
			WHERE enabled AND next_run IS NOT NULL AND next_run <= $1
			ORDER BY next_run, name LIMIT $2 FOR UPDATE SKIP LOCKED`, at, claimBatch)
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
		return nil, fmt.Errorf("claim due cron jobs: %w", err)
	}
	return out, nil
}

// claimJob advances one due job and records its run; ok reports a run
// the caller must execute.
func claimJob(ctx context.Context, tx pgx.Tx, j store.CronJob, now time.Time, host string, plan store.CronPlan) (store.CronRun, bool, error) {
	r := store.CronRun{
		ID: ulid.Make().String(), Job: j.Name, Trigger: store.TriggerSchedule,
		Slot: j.NextSlot, Scheduled: j.NextRun, Started: now, Status: store.RunRunning, Host: host, Steps: []store.CronStep{},
	}
	if r.Slot == "" {
		r.Slot = j.NextRun.UTC().Format(time.RFC3339Nano)
	}
	next, perr := advance(j, now, plan)
	if perr != nil {
		if _, err := tx.Exec(ctx, `UPDATE cron_jobs SET next_run = NULL, next_slot = '' WHERE name = $1`, j.Name); err != nil {
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
	if _, err := tx.Exec(ctx, `UPDATE cron_jobs SET next_run = $1, next_slot = $2 WHERE name = $3`, nextRun, next.Key, j.Name); err != nil {
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
		return r, false, err
	}
	return r, r.Status == store.RunRunning, nil
}

// advance returns the job's next slot after the claimed one and after
// now.
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

// insertRun inserts r unless its job already has a run for r.Slot.
func insertRun(ctx context.Context, q querier, r store.CronRun) (bool, error) {
	var slot *string
	if r.Slot != "" {
		slot = &r.Slot
	}
	scheduled, err := codec.OptTime(r.Scheduled)
	if err != nil {
		return false, err
	}
	started, err := codec.Time(r.Started)
	if err != nil {
		return false, err
	}
	finished, err := codec.OptTime(r.Finished)
	if err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `INSERT INTO cron_runs (`+cronRunCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (job, slot) DO NOTHING`,
		r.ID, r.Job, string(r.Trigger), slot, scheduled, started, finished, string(r.Status), r.Parent, r.Host, r.Error)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

func scanCronRun(sc scanner) (store.CronRun, error) {
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
// under the job's overlap policy. The job's row is locked, so two hosts
// starting runs of a skip job at once start one.
func (db *DB) StartCronRun(ctx context.Context, s store.CronStart) (store.CronRun, error) {
	switch {
	case s.Trigger == store.TriggerManual && s.Parent != "":
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: a manual run has no parent", s.Job)
	case s.Trigger == store.TriggerParent && s.Parent == "":
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: a parent run needs its parent", s.Job)
	case s.Trigger != store.TriggerManual && s.Trigger != store.TriggerParent:
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: trigger %q: want %q or %q", s.Job, s.Trigger, store.TriggerManual, store.TriggerParent)
	}
	s.At = now(s.At)
	var r store.CronRun
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		j, err := getCronJob(ctx, tx, s.Job, true)
		if err != nil {
			return err
		}
		r = store.CronRun{
			ID: ulid.Make().String(), Job: j.Name, Trigger: s.Trigger, Started: s.At,
			Status: store.RunRunning, Parent: s.Parent, Host: s.Host, Steps: []store.CronStep{},
		}
		if j.Overlap == store.OverlapSkip {
			busy, err := jobRunning(ctx, tx, j.Name)
			if err != nil {
				return err
			}
			if busy {
				r.Status, r.Finished, r.Error = store.RunSkipped, s.At, "skipped: the previous run is still running (overlap policy is skip)"
			}
		}
		_, err = insertRun(ctx, tx, r)
		return err
	})
	if err != nil {
		return store.CronRun{}, fmt.Errorf("start run of cron job %s: %w", s.Job, err)
	}
	return r, nil
}

const cronStepCols = `n, command, verdict, rule, exit_code, output, started, finished`

func scanCronStep(sc scanner) (store.CronStep, error) {
	st, _, err := scanCronStepOf(sc, false)
	return st, err
}

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
	st.Started, err1 = codec.ParseTime(started)
	st.Finished, err2 = codec.ParseTime(finished)
	if err := errors.Join(err1, err2); err != nil {
		return store.CronStep{}, "", fmt.Errorf("cron step %s/%d: %w", run, st.N, err)
	}
	return st, run, nil
}

// AppendCronStep adds the run's next step, its output capped; the run's
// row is locked while the step is numbered.
func (db *DB) AppendCronStep(ctx context.Context, runID string, st store.CronStep) (store.CronStep, error) {
	st.Output, _ = store.CapOutput(st.Output)
	started, err := codec.Time(st.Started)
	if err != nil {
		return store.CronStep{}, fmt.Errorf("append step to cron run %s: %w", runID, err)
	}
	finished, err := codec.Time(st.Finished)
	if err != nil {
		return store.CronStep{}, fmt.Errorf("append step to cron run %s: %w", runID, err)
	}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM cron_runs WHERE id = $1 FOR UPDATE`, runID).Scan(&status)
		switch {
		case noRows(err):
			return store.ErrNotFound
		case err != nil:
			return err
		case store.RunStatus(status) != store.RunRunning:
			return fmt.Errorf("%w (it is %s)", store.ErrRunEnded, status)
		}
		return tx.QueryRow(ctx, `INSERT INTO cron_steps (run, `+cronStepCols+`)
			VALUES ($1, (SELECT coalesce(max(n) + 1, 0) FROM cron_steps WHERE run = $1), $2, $3, $4, $5, $6, $7, $8)
			RETURNING n`, runID, st.Command, st.Verdict, st.Rule, st.ExitCode, st.Output, started, finished).Scan(&st.N)
	})
	if err != nil {
		return store.CronStep{}, fmt.Errorf("append step to cron run %s: %w", runID, err)
	}
	return st, nil
}

// FinishCronRun ends a running run with one UPDATE … WHERE status =
// 'running' RETURNING.
func (db *DB) FinishCronRun(ctx context.Context, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	if status != store.RunSucceeded && status != store.RunFailed {
		return store.CronRun{}, fmt.Errorf("finish cron run %s: status %q: a run ends %s or %s", runID, status, store.RunSucceeded, store.RunFailed)
	}
	end, err := codec.Time(now(at))
	if err != nil {
		return store.CronRun{}, fmt.Errorf("finish cron run %s: %w", runID, err)
	}
	var r store.CronRun
	ended := false
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		r, err = scanCronRun(tx.QueryRow(ctx, `UPDATE cron_runs SET status = $1, finished = $2, error = $3
			WHERE id = $4 AND status = 'running' RETURNING `+cronRunCols, string(status), end, msg, runID))
		if noRows(err) {
			ended = true
			r, err = scanCronRun(tx.QueryRow(ctx, `SELECT `+cronRunCols+` FROM cron_runs WHERE id = $1`, runID))
			if noRows(err) {
				return store.ErrNotFound
			}
		}
		if err != nil {
			return err
		}
		r.Steps, err = queryRows(ctx, tx, scanCronStep, `SELECT `+cronStepCols+` FROM cron_steps WHERE run = $1 ORDER BY n`, runID)
		return err
	})
	switch {
	case err != nil:
		return store.CronRun{}, fmt.Errorf("finish cron run %s: %w", runID, err)
	case ended:
		return r, fmt.Errorf("finish cron run %s: %w (it is %s)", runID, store.ErrRunEnded, r.Status)
	}
	return r, nil
}

// AbandonCronRuns fails the running runs of hosts other than keep.
func (db *DB) AbandonCronRuns(ctx context.Context, keep string, at time.Time, reason string) (int, error) {
	end, err := codec.Time(now(at))
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	n, err := db.execN(ctx, `UPDATE cron_runs SET status = 'failed', finished = $1, error = $2
		WHERE status = 'running' AND host <> $3`, end, reason, keep)
	if err != nil {
		return 0, fmt.Errorf("abandon cron runs of hosts other than %q: %w", keep, err)
	}
	return n, nil
}

// GetCronRun returns a run with its steps, or store.ErrNotFound.
func (db *DB) GetCronRun(ctx context.Context, id string) (store.CronRun, error) {
	var r store.CronRun
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		r, err = scanCronRun(tx.QueryRow(ctx, `SELECT `+cronRunCols+` FROM cron_runs WHERE id = $1`, id))
		if noRows(err) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		r.Steps, err = queryRows(ctx, tx, scanCronStep, `SELECT `+cronStepCols+` FROM cron_steps WHERE run = $1 ORDER BY n`, id)
		return err
	})
	if err != nil {
		return store.CronRun{}, fmt.Errorf("get cron run %s: %w", id, db.noteConn(err))
	}
	return r, nil
}

// ListCronRuns lists runs with their steps, newest first.
func (db *DB) ListCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	if limit < 0 {
		return nil, fmt.Errorf("list runs of cron job %q: negative limit %d", job, limit)
	}
	where, args := `WHERE $1 = '' OR job = $1`, []any{job}
	lim := ``
	if limit > 0 {
		lim = ` LIMIT $2`
		args = append(args, limit)
	}
	sel := `SELECT id FROM cron_runs ` + where + ` ORDER BY started DESC, ord DESC` + lim
	var runs []store.CronRun
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		runs, err = queryRows(ctx, tx, scanCronRun, `SELECT `+cronRunCols+` FROM cron_runs WHERE id IN (`+sel+`)
			ORDER BY started DESC, ord DESC`, args...)
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
		return nil, fmt.Errorf("list runs of cron job %q: %w", job, db.noteConn(err))
	}
	return runs, nil
}
