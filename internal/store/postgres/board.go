package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const boardTaskCols = `id, title, body, status, workspace, script, retries, last_error, run, created, updated, prompt`

func scanBoardTask(sc scanner) (store.Task, error) {
	var (
		t                store.Task
		status, script   string
		created, updated string
	)
	if err := sc.Scan(&t.ID, &t.Title, &t.Body, &status, &t.Workspace, &script, &t.Retries, &t.LastError, &t.Run, &created, &updated, &t.Prompt); err != nil {
		return store.Task{}, err
	}
	t.Status = store.TaskStatus(status)
	var errs [3]error
	errs[0] = codec.ParseJSON("script", script, &t.Script)
	t.Created, errs[1] = codec.ParseTime(created)
	t.Updated, errs[2] = codec.ParseTime(updated)
	if err := errors.Join(errs[:]...); err != nil {
		return store.Task{}, fmt.Errorf("task %s: %w", t.ID, err)
	}
	t.Parents = []string{}
	return t, nil
}

func scanString(sc scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}

// getBoardTask reads one task with its parents; lock takes its row.
func getBoardTask(ctx context.Context, q querier, id string, lock bool) (store.Task, error) {
	sql := `SELECT ` + boardTaskCols + ` FROM board_tasks WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	t, err := scanBoardTask(q.QueryRow(ctx, sql, id))
	if noRows(err) {
		return store.Task{}, store.ErrNotFound
	}
	if err != nil {
		return store.Task{}, err
	}
	t.Parents, err = queryRows(ctx, q, scanString, `SELECT parent FROM board_deps WHERE task = $1 ORDER BY parent`, id)
	return t, err
}

// AddTask stores a new task; see store.BoardStore.
func (db *DB) AddTask(ctx context.Context, t store.Task) (store.Task, error) {
	out, err := db.addTask(ctx, t)
	if err != nil {
		return store.Task{}, fmt.Errorf("add task %s: %w", t.ID, err)
	}
	return out, nil
}

func (db *DB) addTask(ctx context.Context, t store.Task) (store.Task, error) {
	t, parents, err := store.CheckNewTask(t)
	if err != nil {
		return store.Task{}, err
	}
	created, err := codec.Time(now(t.Created))
	if err != nil {
		return store.Task{}, err
	}
	script, err := codec.JSON("script", t.Script)
	if err != nil {
		return store.Task{}, err
	}
	var out store.Task
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		open := 0
		for _, p := range parents {
			// FOR SHARE: a parent cannot change status until this task
			// is in, so the promoter sees it.
			var status string
			err := tx.QueryRow(ctx, `SELECT status FROM board_tasks WHERE id = $1 FOR SHARE`, p).Scan(&status)
			if noRows(err) {
				return fmt.Errorf("parent %s: %w", p, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if store.TaskStatus(status) != store.TaskDone {
				open++
			}
		}
		status := store.TaskReady
		if open > 0 {
			status = store.TaskTodo
		}
		if _, err := tx.Exec(ctx, `INSERT INTO board_tasks (id, title, body, status, workspace, script, created, updated, prompt)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`, t.ID, t.Title, t.Body, string(status), t.Workspace, script, created, t.Prompt); err != nil {
			return err
		}
		for _, p := range parents {
			if _, err := tx.Exec(ctx, `INSERT INTO board_deps (task, parent) VALUES ($1, $2)`, t.ID, p); err != nil {
				return err
			}
		}
		var err error
		out, err = getBoardTask(ctx, tx, t.ID, false)
		return err
	})
	return out, err
}

// GetTask returns a task with its parents, or store.ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := getBoardTask(ctx, db.pool, id, false)
	if err != nil {
		return store.Task{}, fmt.Errorf("get task %s: %w", id, db.noteConn(err))
	}
	return t, nil
}

// ListTasks lists tasks in id order, each with its parents.
func (db *DB) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, error) {
	var ts []store.Task
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		q := `SELECT ` + boardTaskCols + ` FROM board_tasks WHERE $1 = '' OR status = $1 ORDER BY id`
		var err error
		if ts, err = queryRows(ctx, tx, scanBoardTask, q, string(f.Status)); err != nil {
			return err
		}
		type dep struct{ task, parent string }
		deps, err := queryRows(ctx, tx, func(sc scanner) (dep, error) {
			var d dep
			err := sc.Scan(&d.task, &d.parent)
			return d, err
		}, `SELECT task, parent FROM board_deps ORDER BY task, parent`)
		if err != nil {
			return err
		}
		idx := make(map[string]int, len(ts))
		for i, t := range ts {
			idx[t.ID] = i
		}
		for _, d := range deps {
			if i, ok := idx[d.task]; ok {
				ts[i].Parents = append(ts[i].Parents, d.parent)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", db.noteConn(err))
	}
	return ts, nil
}

// SetTaskStatus moves a task as the operator; see store.BoardStore.
func (db *DB) SetTaskStatus(ctx context.Context, id string, to store.TaskStatus, reason string, at time.Time) (store.Task, error) {
	ts, err := codec.Time(now(at))
	if err != nil {
		return store.Task{}, fmt.Errorf("move task %s to %s: %w", id, to, err)
	}
	var t store.Task
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if t, err = getBoardTask(ctx, tx, id, true); err != nil {
			return err
		}
		if !store.CanMove(t.Status, to, store.ByOperator) {
			return fmt.Errorf("%w: %s → %s is not an operator's move", store.ErrTransition, t.Status, to)
		}
		if t.Status == store.TaskRunning {
			why := reason
			if why == "" {
				why = "task moved to " + string(to) + " by an operator"
			}
			if _, err := tx.Exec(ctx, `UPDATE board_runs SET status = 'blocked', finished = $1, error = $2 WHERE id = $3 AND status = 'running'`,
				ts, why, t.Run); err != nil {
				return err
			}
		}
		switch to {
		case store.TaskTodo:
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = $1, run = '', retries = 0, last_error = '', updated = $2 WHERE id = $3`, string(to), ts, id)
		case store.TaskBlocked:
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = $1, run = '', last_error = CASE WHEN $2 = '' THEN last_error ELSE $2 END, updated = $3 WHERE id = $4`,
				string(to), reason, ts, id)
		default:
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = $1, run = '', updated = $2 WHERE id = $3`, string(to), ts, id)
		}
		if err != nil {
			return err
		}
		t, err = getBoardTask(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return store.Task{}, fmt.Errorf("move task %s to %s: %w", id, to, err)
	}
	return t, nil
}

func scanBoardComment(sc scanner) (store.TaskComment, error) {
	var (
		c  store.TaskComment
		at string
	)
	if err := sc.Scan(&c.ID, &c.Task, &c.Author, &c.Body, &at); err != nil {
		return store.TaskComment{}, err
	}
	var err error
	c.Time, err = codec.ParseTime(at)
	return c, err
}

// AddComment appends a comment to an existing task.
func (db *DB) AddComment(ctx context.Context, c store.TaskComment) (store.TaskComment, error) {
	c.Time = now(c.Time)
	at, err := codec.Time(c.Time)
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	var out store.TaskComment
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM board_tasks WHERE id = $1`, c.Task).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		var err error
		out, err = scanBoardComment(tx.QueryRow(ctx, `INSERT INTO board_comments (task, author, body, created) VALUES ($1, $2, $3, $4)
			RETURNING id, task, author, body, created`, c.Task, c.Author, c.Body, at))
		return err
	})
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	return out, nil
}

// Comments lists a task's comments, oldest first.
func (db *DB) Comments(ctx context.Context, task string) ([]store.TaskComment, error) {
	cs, err := queryRows(ctx, db.pool, scanBoardComment, `SELECT id, task, author, body, created FROM board_comments WHERE task = $1 ORDER BY id`, task)
	if err != nil {
		return nil, fmt.Errorf("comments of task %s: %w", task, db.noteConn(err))
	}
	return cs, nil
}

// Promote moves every todo task whose parents are all done to ready.
func (db *DB) Promote(ctx context.Context, at time.Time) ([]string, error) {
	ts, err := codec.Time(now(at))
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	var ids []string
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		ids, err = queryRows(ctx, tx, scanString, `UPDATE board_tasks SET status = 'ready', updated = $1
			WHERE status = 'todo' AND NOT EXISTS (
				SELECT 1 FROM board_deps d JOIN board_tasks p ON p.id = d.parent
				WHERE d.task = board_tasks.id AND p.status <> 'done')
			RETURNING id`, ts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// ClaimTask takes the oldest ready task: its row is locked FOR UPDATE
// SKIP LOCKED, so concurrent claimers (on any host) take different
// tasks, and the move and the new run commit together.
func (db *DB) ClaimTask(ctx context.Context, c store.TaskClaim) (store.Task, store.TaskRun, error) {
	if c.Run == "" {
		return store.Task{}, store.TaskRun{}, fmt.Errorf("claim a task: empty run id")
	}
	ts, err := codec.Time(now(c.At))
	if err != nil {
		return store.Task{}, store.TaskRun{}, fmt.Errorf("claim a task for run %s: %w", c.Run, err)
	}
	var (
		t store.Task
		r store.TaskRun
	)
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var id string
		// c.Task claims that task only (issued to a remote worker).
		err := tx.QueryRow(ctx, `SELECT id FROM board_tasks WHERE status = 'ready' AND ($1 = '' OR id = $1)
			ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`, c.Task).Scan(&id)
		if noRows(err) {
			return store.ErrNothingReady
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE board_tasks SET status = 'running', run = $1, updated = $2 WHERE id = $3`, c.Run, ts, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO board_runs (id, task, status, started, log, holder, lease)
			VALUES ($1, $2, 'running', $3, $4, $5, CASE WHEN $6::bigint > 0 THEN now() + $6::bigint * interval '1 microsecond' END)`,
			c.Run, id, ts, c.Log, c.Holder, c.Lease.Microseconds()); err != nil {
			return err
		}
		if t, err = getBoardTask(ctx, tx, id, false); err != nil {
			return err
		}
		r, err = getBoardRun(ctx, tx, c.Run)
		return err
	})
	if err != nil {
		return store.Task{}, store.TaskRun{}, fmt.Errorf("claim a task for run %s: %w", c.Run, err)
	}
	return t, r, nil
}

const boardRunCols = `id, task, status, started, finished, error, log, pid, holder, lease`

func scanBoardRun(sc scanner) (store.TaskRun, error) {
	var (
		r        store.TaskRun
		status   string
		started  string
		finished *string
		lease    *time.Time
	)
	if err := sc.Scan(&r.ID, &r.Task, &status, &started, &finished, &r.Error, &r.Log, &r.PID, &r.Holder, &lease); err != nil {
		return store.TaskRun{}, err
	}
	r.Status = store.TaskRunStatus(status)
	if lease != nil {
		r.LeaseExpires = lease.UTC()
	}
	var errs [2]error
	r.Started, errs[0] = codec.ParseTime(started)
	r.Finished, errs[1] = codec.ParseOptTime(finished)
	if err := errors.Join(errs[:]...); err != nil {
		return store.TaskRun{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.Steps = []store.TaskStep{}
	return r, nil
}

type boardRunStep struct {
	run  string
	step store.TaskStep
}

func scanBoardStep(sc scanner) (boardRunStep, error) {
	var (
		s                 boardRunStep
		started, finished string
	)
	if err := sc.Scan(&s.run, &s.step.N, &s.step.Command, &s.step.Verdict, &s.step.Rule, &s.step.ExitCode, &s.step.Output, &started, &finished); err != nil {
		return boardRunStep{}, err
	}
	var errs [2]error
	s.step.Started, errs[0] = codec.ParseTime(started)
	s.step.Finished, errs[1] = codec.ParseTime(finished)
	return s, errors.Join(errs[:]...)
}

const boardStepCols = `run, n, command, verdict, rule, exit_code, output, started, finished`

// withBoardSteps fills the steps of runs; where selects the steps' runs.
func withBoardSteps(ctx context.Context, q querier, runs []store.TaskRun, where string, args ...any) ([]store.TaskRun, error) {
	steps, err := queryRows(ctx, q, scanBoardStep, `SELECT `+boardStepCols+` FROM board_steps WHERE `+where+` ORDER BY run, n`, args...)
	if err != nil {
		return nil, err
	}
	idx := make(map[string]int, len(runs))
	for i, r := range runs {
		idx[r.ID] = i
	}
	for _, s := range steps {
		if i, ok := idx[s.run]; ok {
			runs[i].Steps = append(runs[i].Steps, s.step)
		}
	}
	return runs, nil
}

func getBoardRun(ctx context.Context, q querier, id string) (store.TaskRun, error) {
	r, err := scanBoardRun(q.QueryRow(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = $1`, id))
	if noRows(err) {
		return store.TaskRun{}, store.ErrNotFound
	}
	if err != nil {
		return store.TaskRun{}, err
	}
	rs, err := withBoardSteps(ctx, q, []store.TaskRun{r}, `run = $1`, id)
	if err != nil {
		return store.TaskRun{}, err
	}
	return rs[0], nil
}

// GetRun returns a run with its steps.
func (db *DB) GetRun(ctx context.Context, run string) (store.TaskRun, error) {
	var r store.TaskRun
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		r, err = getBoardRun(ctx, tx, run)
		return err
	})
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("get run %s: %w", run, db.noteConn(err))
	}
	return r, nil
}

// TaskRuns lists a task's runs, newest first.
func (db *DB) TaskRuns(ctx context.Context, task string) ([]store.TaskRun, error) {
	var rs []store.TaskRun
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		rs, err = queryRows(ctx, tx, scanBoardRun, `SELECT `+boardRunCols+` FROM board_runs WHERE task = $1 ORDER BY started DESC, id DESC`, task)
		if err == nil {
			rs, err = withBoardSteps(ctx, tx, rs, `run IN (SELECT id FROM board_runs WHERE task = $1)`, task)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("runs of task %s: %w", task, db.noteConn(err))
	}
	return rs, nil
}

// RunningRuns lists every open run, oldest first.
func (db *DB) RunningRuns(ctx context.Context) ([]store.TaskRun, error) {
	var rs []store.TaskRun
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		rs, err = queryRows(ctx, tx, scanBoardRun, `SELECT `+boardRunCols+` FROM board_runs WHERE status = 'running' ORDER BY started, id`)
		if err == nil {
			rs, err = withBoardSteps(ctx, tx, rs, `run IN (SELECT id FROM board_runs WHERE status = 'running')`)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("running runs: %w", db.noteConn(err))
	}
	return rs, nil
}

// boardRunningRun checks, inside tx, that run exists and is running,
// locking its row, and returns it without steps.
func boardRunningRun(ctx context.Context, tx pgx.Tx, run string) (store.TaskRun, error) {
	r, err := scanBoardRun(tx.QueryRow(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = $1 FOR UPDATE`, run))
	if noRows(err) {
		return store.TaskRun{}, store.ErrNotFound
	}
	if err != nil {
		return store.TaskRun{}, err
	}
	if r.Status != store.TaskRunRunning {
		return r, fmt.Errorf("%w (it %s)", store.ErrTaskRunEnded, r.Status)
	}
	return r, nil
}

// SetRunPID records the worker process of a running run.
func (db *DB) SetRunPID(ctx context.Context, run string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("set pid of run %s: pid %d", run, pid)
	}
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := boardRunningRun(ctx, tx, run); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE board_runs SET pid = $1 WHERE id = $2`, pid, run)
		return err
	})
	if err != nil {
		return fmt.Errorf("set pid of run %s: %w", run, err)
	}
	return nil
}

// AppendRunStep adds the run's next step; see store.BoardStore.
func (db *DB) AppendRunStep(ctx context.Context, run string, s store.TaskStep) (store.TaskStep, error) {
	s.Started = now(s.Started)
	if s.Finished.IsZero() {
		s.Finished = s.Started
	}
	started, err := codec.Time(s.Started)
	if err != nil {
		return store.TaskStep{}, fmt.Errorf("record step of run %s: %w", run, err)
	}
	finished, err := codec.Time(s.Finished)
	if err != nil {
		return store.TaskStep{}, fmt.Errorf("record step of run %s: %w", run, err)
	}
	s.Output, _ = store.CapOutput(s.Output)
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := boardRunningRun(ctx, tx, run); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO board_steps (run, n, command, verdict, rule, exit_code, output, started, finished)
			VALUES ($1, (SELECT coalesce(max(n) + 1, 0) FROM board_steps WHERE run = $1), $2, $3, $4, $5, $6, $7, $8)
			RETURNING n`, run, s.Command, s.Verdict, s.Rule, s.ExitCode, s.Output, started, finished).Scan(&s.N)
	})
	if err != nil {
		return store.TaskStep{}, fmt.Errorf("record step of run %s: %w", run, err)
	}
	return s, nil
}

// FinishRun ends a running run as succeeded or blocked.
func (db *DB) FinishRun(ctx context.Context, run string, f store.RunFinish) (store.Task, error) {
	var to store.TaskStatus
	switch {
	case f.Status == store.TaskRunSucceeded && f.Review:
		to = store.TaskReview
	case f.Status == store.TaskRunSucceeded:
		to = store.TaskDone
	case f.Status == store.TaskRunBlocked:
		to = store.TaskBlocked
	default:
		return store.Task{}, fmt.Errorf("finish run %s: cannot finish as %q (want succeeded or blocked; failures are recorded)", run, f.Status)
	}
	var t store.Task
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = endRun(ctx, tx, run, f.Status, to, f.Reason, f.At, 0, false)
		return err
	})
	if err != nil {
		return store.Task{}, fmt.Errorf("finish run %s: %w", run, err)
	}
	return t, nil
}

// RecordFailure ends a running run as failed; see store.BoardStore.
func (db *DB) RecordFailure(ctx context.Context, run string, reason string, limit int, at time.Time) (store.Task, error) {
	var t store.Task
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = endRun(ctx, tx, run, store.TaskRunFailed, "", reason, at, limit, false)
		return err
	})
	if err != nil {
		return store.Task{}, fmt.Errorf("record failure of run %s: %w", run, err)
	}
	return t, nil
}

// errLeaseHeld: a run to reclaim was renewed meanwhile.
var errLeaseHeld = errors.New("lease renewed")

// endRun ends a running run and moves its task, inside tx. A failed
// run's task goes to ready or, at limit, blocked. Rows are locked task
// first, then run, as everywhere else, so two writers never deadlock.
// With reclaim, the run must still hold an expired lease once locked
// (errLeaseHeld otherwise).
func endRun(ctx context.Context, tx pgx.Tx, run string, status store.TaskRunStatus, to store.TaskStatus, reason string, at time.Time, limit int, reclaim bool) (store.Task, error) {
	ts, err := codec.Time(now(at))
	if err != nil {
		return store.Task{}, err
	}
	var task string
	if err := tx.QueryRow(ctx, `SELECT task FROM board_runs WHERE id = $1`, run).Scan(&task); err != nil {
		if noRows(err) {
			return store.Task{}, store.ErrNotFound
		}
		return store.Task{}, err
	}
	t, err := getBoardTask(ctx, tx, task, true)
	if err != nil {
		return store.Task{}, err
	}
	if _, err := boardRunningRun(ctx, tx, run); err != nil {
		return store.Task{}, err
	}
	if reclaim {
		var expired bool
		if err := tx.QueryRow(ctx, `SELECT lease IS NOT NULL AND lease < now() FROM board_runs WHERE id = $1`, run).Scan(&expired); err != nil {
			return store.Task{}, err
		}
		if !expired {
			return store.Task{}, errLeaseHeld
		}
	}
	if t.Status != store.TaskRunning || t.Run != run {
		return store.Task{}, fmt.Errorf("task %s is %s with run %q, not running run %s", t.ID, t.Status, t.Run, run)
	}
	retries, lastErr := t.Retries, t.LastError
	if status == store.TaskRunFailed {
		retries++
		lastErr = reason
		to = store.TaskReady
		if limit > 0 && retries >= limit {
			to = store.TaskBlocked
		}
	} else if to == store.TaskBlocked {
		lastErr = reason
	}
	if !store.CanMove(store.TaskRunning, to, store.ByRun) {
		return store.Task{}, fmt.Errorf("%w: running → %s", store.ErrTransition, to)
	}
	if _, err := tx.Exec(ctx, `UPDATE board_runs SET status = $1, finished = $2, error = $3 WHERE id = $4`, string(status), ts, reason, run); err != nil {
		return store.Task{}, err
	}
	if _, err := tx.Exec(ctx, `UPDATE board_tasks SET status = $1, run = '', retries = $2, last_error = $3, updated = $4 WHERE id = $5`,
		string(to), retries, lastErr, ts, t.ID); err != nil {
		return store.Task{}, err
	}
	return getBoardTask(ctx, tx, t.ID, false)
}

// RenewRun extends the lease of a running run held by holder.
func (db *DB) RenewRun(ctx context.Context, run, holder string, ttl time.Duration) (store.TaskRun, error) {
	var r store.TaskRun
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if r, err = boardRunningRun(ctx, tx, run); err != nil {
			return err
		}
		if r.Holder != holder {
			return fmt.Errorf("%w: run %s is held by %q", store.ErrLeaseLost, run, r.Holder)
		}
		r, err = scanBoardRun(tx.QueryRow(ctx, `UPDATE board_runs SET lease = now() + $1::bigint * interval '1 microsecond'
			WHERE id = $2 RETURNING `+boardRunCols, ttl.Microseconds(), run))
		return err
	})
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("renew the lease of run %s: %w", run, err)
	}
	return r, nil
}

// ReclaimRuns ends the running runs whose lease expired by the server's
// clock, as failed, each in its own transaction that checks the lease
// again under the rows' locks: a renewal that got there first keeps the
// run, and of two reclaimers the second finds the run ended. A run that
// process records still name (on whatever machine) is left to its
// machine's fence: it is reclaimed on a later pass, once they are gone.
func (db *DB) ReclaimRuns(ctx context.Context, reason string, limit int, at time.Time) ([]store.TaskRun, error) {
	ids, err := queryRows(ctx, db.pool, scanString, `SELECT id FROM board_runs
		WHERE status = 'running' AND lease IS NOT NULL AND lease < now()
		AND NOT EXISTS (SELECT 1 FROM processes WHERE run = 'kanban:' || board_runs.id)
		ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("reclaim runs whose lease expired: %w", db.noteConn(err))
	}
	out := []store.TaskRun{}
	for _, id := range ids {
		var r store.TaskRun
		err := db.inTx(ctx, func(tx pgx.Tx) error {
			var held bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM processes WHERE run = $1)`, store.KanbanRunKey(id)).Scan(&held); err != nil {
				return err
			}
			if held {
				return errLeaseHeld
			}
			if _, err := endRun(ctx, tx, id, store.TaskRunFailed, "", reason, at, limit, true); err != nil {
				return err
			}
			var err error
			r, err = getBoardRun(ctx, tx, id)
			return err
		})
		switch {
		case err == nil:
			out = append(out, r)
		case errors.Is(err, errLeaseHeld), errors.Is(err, store.ErrTaskRunEnded):
		default:
			return out, fmt.Errorf("reclaim run %s: %w", id, err)
		}
	}
	return out, nil
}

// MintToken stores a worker token for a running run of its task.
func (db *DB) MintToken(ctx context.Context, tok store.WorkerToken) error {
	if len(tok.Hash) != 64 {
		return fmt.Errorf("mint token for run %s: want the hex SHA-256 of the token", tok.Run)
	}
	created, err := codec.Time(now(tok.Created))
	if err != nil {
		return fmt.Errorf("mint token for run %s: %w", tok.Run, err)
	}
	expires, err := codec.Time(tok.Expires)
	if err != nil {
		return fmt.Errorf("mint token for run %s: %w", tok.Run, err)
	}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		r, err := boardRunningRun(ctx, tx, tok.Run)
		if err != nil {
			return err
		}
		if r.Task != tok.Task {
			return fmt.Errorf("run %s is of task %s, not %s", r.ID, r.Task, tok.Task)
		}
		_, err = tx.Exec(ctx, `INSERT INTO board_tokens (hash, task, run, created, expires) VALUES ($1, $2, $3, $4, $5)`,
			tok.Hash, tok.Task, tok.Run, created, expires)
		return err
	})
	if err != nil {
		return fmt.Errorf("mint token for run %s: %w", tok.Run, err)
	}
	return nil
}

// ConsumeToken uses a worker token once; see store.BoardStore. The
// token's row is locked, so of two hosts shown one token, one uses it.
func (db *DB) ConsumeToken(ctx context.Context, hash, task string, at time.Time) (store.WorkerToken, error) {
	at = now(at)
	ts, err := codec.Time(at)
	if err != nil {
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w", task, err)
	}
	var (
		tok     store.WorkerToken
		refusal string
	)
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var (
			created, expires string
			used             *string
		)
		err := tx.QueryRow(ctx, `SELECT hash, task, run, created, expires, used FROM board_tokens WHERE hash = $1 FOR UPDATE`, hash).
			Scan(&tok.Hash, &tok.Task, &tok.Run, &created, &expires, &used)
		if noRows(err) {
			refusal = "unknown"
			return nil
		}
		if err != nil {
			return err
		}
		if used != nil {
			refusal = "already used"
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE board_tokens SET used = $1 WHERE hash = $2`, ts, hash); err != nil {
			return err
		}
		var errs [2]error
		tok.Created, errs[0] = codec.ParseTime(created)
		tok.Expires, errs[1] = codec.ParseTime(expires)
		if err := errors.Join(errs[:]...); err != nil {
			return err
		}
		tok.Used = at
		switch {
		case !at.Before(tok.Expires):
			refusal = "expired"
		case tok.Task != task:
			refusal = "bound to another task"
		default:
			var status string
			if err := tx.QueryRow(ctx, `SELECT status FROM board_runs WHERE id = $1`, tok.Run).Scan(&status); err != nil {
				return err
			}
			if store.TaskRunStatus(status) != store.TaskRunRunning {
				refusal = "its run has ended"
			}
		}
		return nil
	})
	if err != nil {
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w", task, err)
	}
	if refusal != "" {
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w: %s", task, store.ErrTokenRefused, refusal)
	}
	return tok, nil
}
