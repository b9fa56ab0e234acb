package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.BoardStore = (*DB)(nil)

// boardNow returns at, or the current time when at is zero.
func boardNow(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}

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
	var err error
	errs := []error{decJSON("script", script, &t.Script)}
	t.Created, err = decTime(created)
	errs = append(errs, err)
	t.Updated, err = decTime(updated)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.Task{}, fmt.Errorf("task %s: %w", t.ID, err)
	}
	t.Parents = []string{}
	return t, nil
}

// getBoardTask reads one task with its parents.
func getBoardTask(ctx context.Context, q querier, id string) (store.Task, error) {
	t, err := scanBoardTask(q.QueryRowContext(ctx, `SELECT `+boardTaskCols+` FROM board_tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Task{}, store.ErrNotFound
	}
	if err != nil {
		return store.Task{}, err
	}
	t.Parents, err = queryRows(ctx, q, scanBoardString, `SELECT parent FROM board_deps WHERE task = ? ORDER BY parent`, id)
	return t, err
}

func scanBoardString(sc scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
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
	at := boardNow(t.Created)
	created, err := encTime(at)
	if err != nil {
		return store.Task{}, err
	}
	script, err := encJSON("script", t.Script)
	if err != nil {
		return store.Task{}, err
	}

	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Task{}, err
	}
	defer tx.Rollback()
	open := 0
	for _, p := range parents {
		var status string
		err := tx.QueryRowContext(ctx, `SELECT status FROM board_tasks WHERE id = ?`, p).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return store.Task{}, fmt.Errorf("parent %s: %w", p, store.ErrNotFound)
		}
		if err != nil {
			return store.Task{}, err
		}
		if store.TaskStatus(status) != store.TaskDone {
			open++
		}
	}
	status := store.TaskReady
	if open > 0 {
		status = store.TaskTodo
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO board_tasks (id, title, body, status, workspace, script, created, updated, prompt)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.Title, t.Body, string(status), t.Workspace, script, created, created, t.Prompt); err != nil {
		return store.Task{}, err
	}
	for _, p := range parents {
		if _, err := tx.ExecContext(ctx, `INSERT INTO board_deps (task, parent) VALUES (?, ?)`, t.ID, p); err != nil {
			return store.Task{}, err
		}
	}
	out, err := getBoardTask(ctx, tx, t.ID)
	if err != nil {
		return store.Task{}, err
	}
	return out, tx.Commit()
}

// GetTask returns a task with its parents, or store.ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := getBoardTask(ctx, db.r, id)
	if err != nil {
		return store.Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	return t, nil
}

// ListTasks lists tasks in id order, each with its parents.
func (db *DB) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, error) {
	q := `SELECT ` + boardTaskCols + ` FROM board_tasks ORDER BY id`
	args := []any{}
	if f.Status != "" {
		q = `SELECT ` + boardTaskCols + ` FROM board_tasks WHERE status = ? ORDER BY id`
		args = append(args, string(f.Status))
	}
	ts, err := queryRows(ctx, db.r, scanBoardTask, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	type dep struct{ task, parent string }
	deps, err := queryRows(ctx, db.r, func(sc scanner) (dep, error) {
		var d dep
		err := sc.Scan(&d.task, &d.parent)
		return d, err
	}, `SELECT task, parent FROM board_deps ORDER BY task, parent`)
	if err != nil {
		return nil, fmt.Errorf("list tasks: dependencies: %w", err)
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
	return ts, nil
}

// SetTaskStatus moves a task as the operator; see store.BoardStore.
func (db *DB) SetTaskStatus(ctx context.Context, id string, to store.TaskStatus, reason string, at time.Time) (store.Task, error) {
	t, err := db.setTaskStatus(ctx, id, to, reason, boardNow(at))
	if err != nil {
		return store.Task{}, fmt.Errorf("move task %s to %s: %w", id, to, err)
	}
	return t, nil
}

func (db *DB) setTaskStatus(ctx context.Context, id string, to store.TaskStatus, reason string, at time.Time) (store.Task, error) {
	ts, err := encTime(at)
	if err != nil {
		return store.Task{}, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Task{}, err
	}
	defer tx.Rollback()
	t, err := getBoardTask(ctx, tx, id)
	if err != nil {
		return store.Task{}, err
	}
	if !store.CanMove(t.Status, to, store.ByOperator) {
		return store.Task{}, fmt.Errorf("%w: %s → %s is not an operator's move", store.ErrTransition, t.Status, to)
	}
	if t.Status == store.TaskRunning {
		why := reason
		if why == "" {
			why = "task moved to " + string(to) + " by an operator"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE board_runs SET status = 'blocked', finished = ?, error = ? WHERE id = ? AND status = 'running'`,
			ts, why, t.Run); err != nil {
			return store.Task{}, err
		}
	}
	switch to {
	case store.TaskTodo: // unblock: a fresh failure budget
		_, err = tx.ExecContext(ctx, `UPDATE board_tasks SET status = ?, run = '', retries = 0, last_error = '', updated = ? WHERE id = ?`, string(to), ts, id)
	case store.TaskBlocked:
		_, err = tx.ExecContext(ctx, `UPDATE board_tasks SET status = ?, run = '', last_error = CASE WHEN ? = '' THEN last_error ELSE ? END, updated = ? WHERE id = ?`,
			string(to), reason, reason, ts, id)
	default:
		_, err = tx.ExecContext(ctx, `UPDATE board_tasks SET status = ?, run = '', updated = ? WHERE id = ?`, string(to), ts, id)
	}
	if err != nil {
		return store.Task{}, err
	}
	if t, err = getBoardTask(ctx, tx, id); err != nil {
		return store.Task{}, err
	}
	return t, tx.Commit()
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
	c.Time, err = decTime(at)
	return c, err
}

// AddComment appends a comment to an existing task.
func (db *DB) AddComment(ctx context.Context, c store.TaskComment) (store.TaskComment, error) {
	c.Time = boardNow(c.Time)
	at, err := encTime(c.Time)
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM board_tasks WHERE id = ?`, c.Task).Scan(&n); err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	if n == 0 {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, store.ErrNotFound)
	}
	out, err := scanBoardComment(tx.QueryRowContext(ctx, `INSERT INTO board_comments (task, author, body, created) VALUES (?, ?, ?, ?)
		RETURNING id, task, author, body, created`, c.Task, c.Author, c.Body, at))
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	if err := tx.Commit(); err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	return out, nil
}

// Comments lists a task's comments, oldest first.
func (db *DB) Comments(ctx context.Context, task string) ([]store.TaskComment, error) {
	cs, err := queryRows(ctx, db.r, scanBoardComment, `SELECT id, task, author, body, created FROM board_comments WHERE task = ? ORDER BY id`, task)
	if err != nil {
		return nil, fmt.Errorf("comments of task %s: %w", task, err)
	}
	return cs, nil
}

// Promote moves every todo task whose parents are all done to ready.
func (db *DB) Promote(ctx context.Context, at time.Time) ([]string, error) {
	ts, err := encTime(boardNow(at))
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	ids, err := queryRows(ctx, db.w, scanBoardString, `UPDATE board_tasks SET status = 'ready', updated = ?
		WHERE status = 'todo' AND NOT EXISTS (
			SELECT 1 FROM board_deps d JOIN board_tasks p ON p.id = d.parent
			WHERE d.task = board_tasks.id AND p.status <> 'done')
		RETURNING id`, ts)
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// ClaimTask takes the oldest ready task in one immediate transaction.
func (db *DB) ClaimTask(ctx context.Context, c store.TaskClaim) (store.Task, store.TaskRun, error) {
	t, r, err := db.claimTask(ctx, c)
	if err != nil {
		return store.Task{}, store.TaskRun{}, fmt.Errorf("claim a task for run %s: %w", c.Run, err)
	}
	return t, r, nil
}

func (db *DB) claimTask(ctx context.Context, c store.TaskClaim) (store.Task, store.TaskRun, error) {
	if c.Run == "" {
		return store.Task{}, store.TaskRun{}, errors.New("empty run id")
	}
	ts, err := encTime(boardNow(c.At))
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	// The writer's transactions begin IMMEDIATE: the write lock is held
	// from the SELECT on, so no other claimer (goroutine or process)
	// can pick the same row in between.
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	defer tx.Rollback()
	var id string
	if c.Task != "" {
		err = tx.QueryRowContext(ctx, `SELECT id FROM board_tasks WHERE status = 'ready' AND id = ?`, c.Task).Scan(&id)
	} else {
		err = tx.QueryRowContext(ctx, `SELECT id FROM board_tasks WHERE status = 'ready' ORDER BY id LIMIT 1`).Scan(&id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.Task{}, store.TaskRun{}, store.ErrNothingReady
	}
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE board_tasks SET status = 'running', run = ?, updated = ? WHERE id = ? AND status = 'ready'`, c.Run, ts, id)
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	if err := oneRow(res); err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	var lease any
	if c.Lease > 0 {
		if lease, err = encTime(time.Now().Add(c.Lease)); err != nil {
			return store.Task{}, store.TaskRun{}, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO board_runs (id, task, status, started, log, holder, lease) VALUES (?, ?, 'running', ?, ?, ?, ?)`,
		c.Run, id, ts, c.Log, c.Holder, lease); err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	t, err := getBoardTask(ctx, tx, id)
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	r, err := getBoardRun(ctx, tx, c.Run)
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	return t, r, tx.Commit()
}

const boardRunCols = `id, task, status, started, finished, error, log, pid, holder, lease`

func scanBoardRun(sc scanner) (store.TaskRun, error) {
	var (
		r        store.TaskRun
		status   string
		started  string
		finished sql.NullString
		lease    sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.Task, &status, &started, &finished, &r.Error, &r.Log, &r.PID, &r.Holder, &lease); err != nil {
		return store.TaskRun{}, err
	}
	r.Status = store.TaskRunStatus(status)
	var err error
	errs := []error{}
	r.Started, err = decTime(started)
	errs = append(errs, err)
	r.Finished, err = decOptTime(finished)
	errs = append(errs, err)
	r.LeaseExpires, err = decOptTime(lease)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
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
	var err error
	errs := []error{}
	s.step.Started, err = decTime(started)
	errs = append(errs, err)
	s.step.Finished, err = decTime(finished)
	errs = append(errs, err)
	return s, errors.Join(errs...)
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
	r, err := scanBoardRun(q.QueryRowContext(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.TaskRun{}, store.ErrNotFound
	}
	if err != nil {
		return store.TaskRun{}, err
	}
	rs, err := withBoardSteps(ctx, q, []store.TaskRun{r}, `run = ?`, id)
	if err != nil {
		return store.TaskRun{}, err
	}
	return rs[0], nil
}

// GetRun returns a run with its steps.
func (db *DB) GetRun(ctx context.Context, run string) (store.TaskRun, error) {
	r, err := getBoardRun(ctx, db.r, run)
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("get run %s: %w", run, err)
	}
	return r, nil
}

// TaskRuns lists a task's runs, newest first.
func (db *DB) TaskRuns(ctx context.Context, task string) ([]store.TaskRun, error) {
	rs, err := queryRows(ctx, db.r, scanBoardRun, `SELECT `+boardRunCols+` FROM board_runs WHERE task = ? ORDER BY started DESC, id DESC`, task)
	if err == nil {
		rs, err = withBoardSteps(ctx, db.r, rs, `run IN (SELECT id FROM board_runs WHERE task = ?)`, task)
	}
	if err != nil {
		return nil, fmt.Errorf("runs of task %s: %w", task, err)
	}
	return rs, nil
}

// RunningRuns lists every open run, oldest first.
func (db *DB) RunningRuns(ctx context.Context) ([]store.TaskRun, error) {
	rs, err := queryRows(ctx, db.r, scanBoardRun, `SELECT `+boardRunCols+` FROM board_runs WHERE status = 'running' ORDER BY started, id`)
	if err == nil {
		rs, err = withBoardSteps(ctx, db.r, rs, `run IN (SELECT id FROM board_runs WHERE status = 'running')`)
	}
	if err != nil {
		return nil, fmt.Errorf("running runs: %w", err)
	}
	return rs, nil
}

// boardRunningRun checks, inside tx, that run exists and is running, and
// returns it without steps.
func boardRunningRun(ctx context.Context, tx *sql.Tx, run string) (store.TaskRun, error) {
	r, err := scanBoardRun(tx.QueryRowContext(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = ?`, run))
	if errors.Is(err, sql.ErrNoRows) {
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
	if err := db.setRunPID(ctx, run, pid); err != nil {
		return fmt.Errorf("set pid of run %s: %w", run, err)
	}
	return nil
}

func (db *DB) setRunPID(ctx context.Context, run string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d", pid)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := boardRunningRun(ctx, tx, run); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE board_runs SET pid = ? WHERE id = ?`, pid, run); err != nil {
		return err
	}
	return tx.Commit()
}

// AppendRunStep adds the run's next step; see store.BoardStore.
func (db *DB) AppendRunStep(ctx context.Context, run string, s store.TaskStep) (store.TaskStep, error) {
	out, err := db.appendRunStep(ctx, run, s)
	if err != nil {
		return store.TaskStep{}, fmt.Errorf("record step of run %s: %w", run, err)
	}
	return out, nil
}

func (db *DB) appendRunStep(ctx context.Context, run string, s store.TaskStep) (store.TaskStep, error) {
	s.Started = boardNow(s.Started)
	if s.Finished.IsZero() {
		s.Finished = s.Started
	}
	started, err := encTime(s.Started)
	if err != nil {
		return store.TaskStep{}, err
	}
	finished, err := encTime(s.Finished)
	if err != nil {
		return store.TaskStep{}, err
	}
	s.Output, _ = store.CapOutput(s.Output)
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.TaskStep{}, err
	}
	defer tx.Rollback()
	if _, err := boardRunningRun(ctx, tx, run); err != nil {
		return store.TaskStep{}, err
	}
	if err := tx.QueryRowContext(ctx, `INSERT INTO board_steps (run, n, command, verdict, rule, exit_code, output, started, finished)
		VALUES (?, (SELECT coalesce(max(n) + 1, 0) FROM board_steps WHERE run = ?), ?, ?, ?, ?, ?, ?, ?)
		RETURNING n`,
		run, run, s.Command, s.Verdict, s.Rule, s.ExitCode, s.Output, started, finished).Scan(&s.N); err != nil {
		return store.TaskStep{}, err
	}
	return s, tx.Commit()
}

// FinishRun ends a running run as succeeded or blocked.
func (db *DB) FinishRun(ctx context.Context, run string, f store.RunFinish) (store.Task, error) {
	t, err := db.finishRun(ctx, run, f)
	if err != nil {
		return store.Task{}, fmt.Errorf("finish run %s: %w", run, err)
	}
	return t, nil
}

func (db *DB) finishRun(ctx context.Context, run string, f store.RunFinish) (store.Task, error) {
	var to store.TaskStatus
	switch {
	case f.Status == store.TaskRunSucceeded && f.Review:
		to = store.TaskReview
	case f.Status == store.TaskRunSucceeded:
		to = store.TaskDone
	case f.Status == store.TaskRunBlocked:
		to = store.TaskBlocked
	default:
		return store.Task{}, fmt.Errorf("cannot finish as %q (want succeeded or blocked; failures are recorded)", f.Status)
	}
	return db.endRun(ctx, run, f.Status, to, f.Reason, f.At, 0)
}

// RecordFailure ends a running run as failed; see store.BoardStore.
func (db *DB) RecordFailure(ctx context.Context, run string, reason string, limit int, at time.Time) (store.Task, error) {
	t, err := db.endRun(ctx, run, store.TaskRunFailed, "", reason, at, limit)
	if err != nil {
		return store.Task{}, fmt.Errorf("record failure of run %s: %w", run, err)
	}
	return t, nil
}

// endRun ends a running run and moves its task, in one transaction. A
// failed run's task goes to ready or, at limit, blocked.
func (db *DB) endRun(ctx context.Context, run string, status store.TaskRunStatus, to store.TaskStatus, reason string, at time.Time, limit int) (store.Task, error) {
	return db.endRunIf(ctx, run, status, to, reason, at, limit, nil)
}

// endRunIf is endRun that first checks the running run with check
// (inside the transaction, which holds the write lock).
func (db *DB) endRunIf(ctx context.Context, run string, status store.TaskRunStatus, to store.TaskStatus, reason string, at time.Time, limit int, check func(store.TaskRun) error) (store.Task, error) {
	ts, err := encTime(boardNow(at))
	if err != nil {
		return store.Task{}, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Task{}, err
	}
	defer tx.Rollback()
	r, err := boardRunningRun(ctx, tx, run)
	if err != nil {
		return store.Task{}, err
	}
	if check != nil {
		if err := check(r); err != nil {
			return store.Task{}, err
		}
	}
	t, err := getBoardTask(ctx, tx, r.Task)
	if err != nil {
		return store.Task{}, err
	}
	if t.Status != store.TaskRunning || t.Run != run {
		// The schema keeps one open run per running task; this is a
		// store bug, not a race.
		return store.Task{}, fmt.Errorf("task %s is %s with run %q, not running run %s", t.ID, t.Status, t.Run, run)
	}
	retries := t.Retries
	lastErr := t.LastError
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
	if _, err := tx.ExecContext(ctx, `UPDATE board_runs SET status = ?, finished = ?, error = ? WHERE id = ?`, string(status), ts, reason, run); err != nil {
		return store.Task{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE board_tasks SET status = ?, run = '', retries = ?, last_error = ?, updated = ? WHERE id = ?`,
		string(to), retries, lastErr, ts, t.ID); err != nil {
		return store.Task{}, err
	}
	if t, err = getBoardTask(ctx, tx, t.ID); err != nil {
		return store.Task{}, err
	}
	return t, tx.Commit()
}

// RenewRun extends the lease of a running run held by holder to ttl
// from now (this process's clock: SQLite hosts share one machine).
func (db *DB) RenewRun(ctx context.Context, run, holder string, ttl time.Duration) (store.TaskRun, error) {
	r, err := db.renewRun(ctx, run, holder, ttl)
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("renew the lease of run %s: %w", run, err)
	}
	return r, nil
}

func (db *DB) renewRun(ctx context.Context, run, holder string, ttl time.Duration) (store.TaskRun, error) {
	until, err := encTime(time.Now().Add(ttl))
	if err != nil {
		return store.TaskRun{}, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.TaskRun{}, err
	}
	defer tx.Rollback()
	r, err := boardRunningRun(ctx, tx, run)
	if err != nil {
		return store.TaskRun{}, err
	}
	if r.Holder != holder {
		return store.TaskRun{}, fmt.Errorf("%w: run %s is held by %q", store.ErrLeaseLost, run, r.Holder)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE board_runs SET lease = ? WHERE id = ?`, until, run); err != nil {
		return store.TaskRun{}, err
	}
	if r, err = boardRunningRun(ctx, tx, run); err != nil {
		return store.TaskRun{}, err
	}
	return r, tx.Commit()
}

// errLeaseHeld: a run to reclaim was renewed meanwhile, or still has
// processes on record.
var errLeaseHeld = errors.New("lease renewed")

// unfenced is errLeaseHeld while a process record names run: whatever
// it ran may still be running, so it is not retried before a fence
// (the spawner's machine's) confirmed it gone.
func (db *DB) unfenced(ctx context.Context, run string) error {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM processes WHERE run = ?`, run).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return errLeaseHeld
	}
	return nil
}

// ReclaimRuns ends the running runs whose lease expired (this process's
// clock) and that no process record names as failed, each in its own
// transaction that checks the lease again under the write lock.
func (db *DB) ReclaimRuns(ctx context.Context, reason string, limit int, at time.Time) ([]store.TaskRun, error) {
	nowText, err := encTime(time.Now())
	if err != nil {
		return nil, fmt.Errorf("reclaim runs whose lease expired: %w", err)
	}
	ids, err := queryRows(ctx, db.r, scanBoardString, `SELECT id FROM board_runs
		WHERE status = 'running' AND lease IS NOT NULL AND lease < ?
		AND NOT EXISTS (SELECT 1 FROM processes WHERE run = 'kanban:' || board_runs.id)
		ORDER BY started, id`, nowText)
	if err != nil {
		return nil, fmt.Errorf("reclaim runs whose lease expired: %w", err)
	}
	out := []store.TaskRun{}
	for _, id := range ids {
		_, err := db.endRunIf(ctx, id, store.TaskRunFailed, "", reason, at, limit, func(r store.TaskRun) error {
			if r.LeaseExpires.IsZero() || !r.LeaseExpires.Before(time.Now()) {
				return errLeaseHeld
			}
			return db.unfenced(ctx, store.KanbanRunKey(id))
		})
		switch {
		case err == nil:
			r, err := getBoardRun(ctx, db.r, id)
			if err != nil {
				return out, fmt.Errorf("reclaim run %s: %w", id, err)
			}
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
	if err := db.mintToken(ctx, tok); err != nil {
		return fmt.Errorf("mint token for run %s: %w", tok.Run, err)
	}
	return nil
}

func (db *DB) mintToken(ctx context.Context, tok store.WorkerToken) error {
	if len(tok.Hash) != 64 {
		return errors.New("want the hex SHA-256 of the token")
	}
	created, err := encTime(boardNow(tok.Created))
	if err != nil {
		return err
	}
	expires, err := encTime(tok.Expires)
	if err != nil {
		return err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r, err := boardRunningRun(ctx, tx, tok.Run)
	if err != nil {
		return err
	}
	if r.Task != tok.Task {
		return fmt.Errorf("run %s is of task %s, not %s", r.ID, r.Task, tok.Task)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO board_tokens (hash, task, run, created, expires) VALUES (?, ?, ?, ?, ?)`,
		tok.Hash, tok.Task, tok.Run, created, expires); err != nil {
		return err
	}
	return tx.Commit()
}

// ConsumeToken uses a worker token once; see store.BoardStore.
func (db *DB) ConsumeToken(ctx context.Context, hash, task string, at time.Time) (store.WorkerToken, error) {
	tok, err := db.consumeToken(ctx, hash, task, boardNow(at))
	if err != nil {
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w", task, err)
	}
	return tok, nil
}

func (db *DB) consumeToken(ctx context.Context, hash, task string, at time.Time) (store.WorkerToken, error) {
	ts, err := encTime(at)
	if err != nil {
		return store.WorkerToken{}, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.WorkerToken{}, err
	}
	defer tx.Rollback()
	var (
		tok              store.WorkerToken
		created, expires string
		used             sql.NullString
	)
	err = tx.QueryRowContext(ctx, `SELECT hash, task, run, created, expires, used FROM board_tokens WHERE hash = ?`, hash).
		Scan(&tok.Hash, &tok.Task, &tok.Run, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return store.WorkerToken{}, fmt.Errorf("%w: unknown", store.ErrTokenRefused)
	}
	if err != nil {
		return store.WorkerToken{}, err
	}
	if used.Valid {
		return store.WorkerToken{}, fmt.Errorf("%w: already used", store.ErrTokenRefused)
	}
	// Burn it first: every outcome below uses the token up.
	if _, err := tx.ExecContext(ctx, `UPDATE board_tokens SET used = ? WHERE hash = ?`, ts, hash); err != nil {
		return store.WorkerToken{}, err
	}
	var errs []error
	tok.Created, err = decTime(created)
	errs = append(errs, err)
	tok.Expires, err = decTime(expires)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.WorkerToken{}, err
	}
	tok.Used = at
	var refusal string
	switch {
	case !at.Before(tok.Expires):
		refusal = "expired"
	case tok.Task != task:
		refusal = "bound to another task"
	default:
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM board_runs WHERE id = ?`, tok.Run).Scan(&status); err != nil {
			return store.WorkerToken{}, err
		}
		if store.TaskRunStatus(status) != store.TaskRunRunning {
			refusal = "its run has ended"
		}
	}
	if err := tx.Commit(); err != nil {
		return store.WorkerToken{}, err
	}
	if refusal != "" {
		return store.WorkerToken{}, fmt.Errorf("%w: %s", store.ErrTokenRefused, refusal)
	}
	return tok, nil
}
