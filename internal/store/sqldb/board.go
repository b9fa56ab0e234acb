package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

// The kanban board (store.BoardStore). Every write is one transaction
// that locks, on PostgreSQL, the rows it decides on — a task's row
// before its run's, everywhere, so that two writers never deadlock —
// and holds the whole database on SQLite (BEGIN IMMEDIATE). Leases are
// kept by the clock Dialect.Later names.

var _ store.BoardStore = (*Base)(nil)

// boardNow returns at, or the current time when at is zero.
func boardNow(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}

// later is the SQL for the lease clock d from now, with its arguments
// (Dialect.Later; by default this process's clock, as time text).
func (b *Base) later(d time.Duration) (string, []any, error) {
	if b.d.Later != nil {
		return b.d.Later(d)
	}
	s, err := codec.Time(time.Now().Add(d))
	if err != nil {
		return "", nil, err
	}
	return "?", []any{s}, nil
}

// leaseTime scans a lease column: time text where leases are kept by
// the process's clock, a timestamp (time.Time) where by the server's
// (see Dialect.Later); NULL is the zero time.
type leaseTime struct{ t time.Time }

// Scan implements sql.Scanner, which both drivers call.
func (l *leaseTime) Scan(v any) error {
	var err error
	switch v := v.(type) {
	case nil:
		l.t = time.Time{}
	case time.Time:
		l.t = v.UTC()
	case string:
		l.t, err = codec.ParseTime(v)
	case []byte:
		l.t, err = codec.ParseTime(string(v))
	default:
		err = fmt.Errorf("lease: unexpected %T", v)
	}
	return err
}

const boardTaskCols = `id, title, body, status, workspace, script, retries, last_error, run, created, updated, prompt`

func scanBoardTask(sc codec.Scanner) (store.Task, error) {
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

// getBoardTask reads one task with its parents; lock takes its row for
// the transaction q is.
func (b *Base) getBoardTask(ctx context.Context, q Q, id string, lock bool) (store.Task, error) {
	query := `SELECT ` + boardTaskCols + ` FROM board_tasks WHERE id = ?`
	if lock {
		query += b.d.ForUpdate
	}
	t, err := scanBoardTask(q.QueryRow(ctx, query, id))
	if err != nil {
		return store.Task{}, notFound(err)
	}
	t.Parents, err = QueryRows(ctx, q, ScanString, `SELECT parent FROM board_deps WHERE task = ? ORDER BY parent`, id)
	return t, err
}

// AddTask stores a new task; see store.BoardStore.
func (b *Base) AddTask(ctx context.Context, t store.Task) (store.Task, error) {
	out, err := b.addTask(ctx, t)
	if err != nil {
		return store.Task{}, fmt.Errorf("add task %s: %w", t.ID, err)
	}
	return out, nil
}

func (b *Base) addTask(ctx context.Context, t store.Task) (store.Task, error) {
	t, parents, err := store.CheckNewTask(t)
	if err != nil {
		return store.Task{}, err
	}
	created, err := codec.Time(boardNow(t.Created))
	if err != nil {
		return store.Task{}, err
	}
	script, err := codec.JSON("script", t.Script)
	if err != nil {
		return store.Task{}, err
	}
	var out store.Task
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		open := 0
		for _, p := range parents {
			// Shared lock: a parent cannot change status until this
			// task is in, so the promoter sees it.
			var status string
			err := tx.QueryRow(ctx, `SELECT status FROM board_tasks WHERE id = ?`+b.d.ForShare, p).Scan(&status)
			if err != nil {
				return fmt.Errorf("parent %s: %w", p, notFound(err))
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
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.Title, t.Body, string(status), t.Workspace, script, created, created, t.Prompt); err != nil {
			return err
		}
		for _, p := range parents {
			if _, err := tx.Exec(ctx, `INSERT INTO board_deps (task, parent) VALUES (?, ?)`, t.ID, p); err != nil {
				return err
			}
		}
		var err error
		out, err = b.getBoardTask(ctx, tx, t.ID, false)
		return err
	})
	return out, err
}

// GetTask returns a task with its parents, or store.ErrNotFound.
func (b *Base) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := b.getBoardTask(ctx, b.r, id, false)
	if err != nil {
		return store.Task{}, fmt.Errorf("get task %s: %w", id, b.note(err))
	}
	return t, nil
}

// ListTasks lists tasks in id order, each with its parents, from one
// snapshot.
func (b *Base) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, error) {
	q := `SELECT ` + boardTaskCols + ` FROM board_tasks ORDER BY id`
	args := []any{}
	if f.Status != "" {
		q = `SELECT ` + boardTaskCols + ` FROM board_tasks WHERE status = ? ORDER BY id`
		args = append(args, string(f.Status))
	}
	var ts []store.Task
	err := b.inTx(ctx, TxRead, func(tx Q) error {
		var err error
		if ts, err = QueryRows(ctx, tx, scanBoardTask, q, args...); err != nil {
			return err
		}
		deps, err := QueryRows(ctx, tx, func(sc codec.Scanner) (child[string], error) {
			var d child[string]
			err := sc.Scan(&d.of, &d.v)
			return d, err
		}, `SELECT task, parent FROM board_deps ORDER BY task, parent`)
		if err != nil {
			return fmt.Errorf("dependencies: %w", err)
		}
		attach(ts, func(t *store.Task) string { return t.ID }, deps, func(t *store.Task, parent string) {
			t.Parents = append(t.Parents, parent)
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// SetTaskStatus moves a task as the operator; see store.BoardStore.
func (b *Base) SetTaskStatus(ctx context.Context, id string, to store.TaskStatus, reason string, at time.Time) (store.Task, error) {
	t, err := b.setTaskStatus(ctx, id, to, reason, boardNow(at))
	if err != nil {
		return store.Task{}, fmt.Errorf("move task %s to %s: %w", id, to, err)
	}
	return t, nil
}

func (b *Base) setTaskStatus(ctx context.Context, id string, to store.TaskStatus, reason string, at time.Time) (store.Task, error) {
	ts, err := codec.Time(at)
	if err != nil {
		return store.Task{}, err
	}
	var t store.Task
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var err error
		if t, err = b.getBoardTask(ctx, tx, id, true); err != nil {
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
			if _, err := tx.Exec(ctx, `UPDATE board_runs SET status = 'blocked', finished = ?, error = ? WHERE id = ? AND status = 'running'`,
				ts, why, t.Run); err != nil {
				return err
			}
		}
		switch to {
		case store.TaskTodo: // unblock: a fresh failure budget
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = ?, run = '', retries = 0, last_error = '', updated = ? WHERE id = ?`, string(to), ts, id)
		case store.TaskBlocked:
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = ?, run = '', last_error = CASE WHEN ? = '' THEN last_error ELSE ? END, updated = ? WHERE id = ?`,
				string(to), reason, reason, ts, id)
		default:
			_, err = tx.Exec(ctx, `UPDATE board_tasks SET status = ?, run = '', updated = ? WHERE id = ?`, string(to), ts, id)
		}
		if err != nil {
			return err
		}
		t, err = b.getBoardTask(ctx, tx, id, false)
		return err
	})
	return t, err
}

const boardCommentCols = `id, task, author, body, created`

func scanBoardComment(sc codec.Scanner) (store.TaskComment, error) {
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
func (b *Base) AddComment(ctx context.Context, c store.TaskComment) (store.TaskComment, error) {
	c.Time = boardNow(c.Time)
	at, err := codec.Time(c.Time)
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	var out store.TaskComment
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM board_tasks WHERE id = ?`, c.Task).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		var err error
		out, err = scanBoardComment(tx.QueryRow(ctx, `INSERT INTO board_comments (task, author, body, created) VALUES (?, ?, ?, ?)
			RETURNING `+boardCommentCols, c.Task, c.Author, c.Body, at))
		return err
	})
	if err != nil {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: %w", c.Task, err)
	}
	return out, nil
}

// Comments lists a task's comments, oldest first.
func (b *Base) Comments(ctx context.Context, task string) ([]store.TaskComment, error) {
	cs, err := QueryRows(ctx, b.r, scanBoardComment, `SELECT `+boardCommentCols+` FROM board_comments WHERE task = ? ORDER BY id`, task)
	if err != nil {
		return nil, fmt.Errorf("comments of task %s: %w", task, b.note(err))
	}
	return cs, nil
}

// Promote moves every todo task whose parents are all done to ready.
func (b *Base) Promote(ctx context.Context, at time.Time) ([]string, error) {
	ts, err := codec.Time(boardNow(at))
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	var ids []string
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var err error
		ids, err = QueryRows(ctx, tx, ScanString, `UPDATE board_tasks SET status = 'ready', updated = ?
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

// ClaimTask takes the oldest ready task (c.Task: that one only, for a
// remote worker). Its row is locked past those other claimers hold
// (Dialect.SkipLocked), or the whole database is (SQLite's immediate
// transaction), so concurrent claimers on any host take different
// tasks; the move and the new run commit together.
func (b *Base) ClaimTask(ctx context.Context, c store.TaskClaim) (store.Task, store.TaskRun, error) {
	if c.Run == "" {
		return store.Task{}, store.TaskRun{}, errors.New("claim a task: empty run id")
	}
	t, r, err := b.claimTask(ctx, c)
	if err != nil {
		return store.Task{}, store.TaskRun{}, fmt.Errorf("claim a task for run %s: %w", c.Run, err)
	}
	return t, r, nil
}

func (b *Base) claimTask(ctx context.Context, c store.TaskClaim) (store.Task, store.TaskRun, error) {
	ts, err := codec.Time(boardNow(c.At))
	if err != nil {
		return store.Task{}, store.TaskRun{}, err
	}
	pick, args := `SELECT id FROM board_tasks WHERE status = 'ready' ORDER BY id LIMIT 1`, []any{}
	if c.Task != "" {
		pick, args = `SELECT id FROM board_tasks WHERE status = 'ready' AND id = ?`, []any{c.Task}
	}
	var (
		t store.Task
		r store.TaskRun
	)
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var id string
		if err := tx.QueryRow(ctx, pick+b.d.SkipLocked, args...).Scan(&id); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNothingReady
			}
			return err
		}
		n, err := tx.Exec(ctx, `UPDATE board_tasks SET status = 'running', run = ?, updated = ? WHERE id = ? AND status = 'ready'`, c.Run, ts, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		lease, largs := "NULL", []any(nil)
		if c.Lease > 0 {
			if lease, largs, err = b.later(c.Lease); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO board_runs (id, task, status, started, log, holder, lease) VALUES (?, ?, 'running', ?, ?, ?, `+lease+`)`,
			append([]any{c.Run, id, ts, c.Log, c.Holder}, largs...)...); err != nil {
			return err
		}
		if t, err = b.getBoardTask(ctx, tx, id, false); err != nil {
			return err
		}
		r, err = getBoardRun(ctx, tx, c.Run)
		return err
	})
	return t, r, err
}

const boardRunCols = `id, task, status, started, finished, error, log, pid, holder, lease`

func scanBoardRun(sc codec.Scanner) (store.TaskRun, error) {
	var (
		r        store.TaskRun
		status   string
		started  string
		finished *string
		lease    leaseTime
	)
	if err := sc.Scan(&r.ID, &r.Task, &status, &started, &finished, &r.Error, &r.Log, &r.PID, &r.Holder, &lease); err != nil {
		return store.TaskRun{}, err
	}
	r.Status = store.TaskRunStatus(status)
	r.LeaseExpires = lease.t
	var errs [2]error
	r.Started, errs[0] = codec.ParseTime(started)
	r.Finished, errs[1] = codec.ParseOptTime(finished)
	if err := errors.Join(errs[:]...); err != nil {
		return store.TaskRun{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.Steps = []store.TaskStep{}
	return r, nil
}

// child is a row that belongs to the item (a task, a run) whose id is
// of.
type child[V any] struct {
	of string
	v  V
}

// attach adds each child to the item of items it belongs to, in order;
// id is an item's id. A child of no item listed is passed over.
func attach[T, V any](items []T, id func(*T) string, children []child[V], add func(*T, V)) {
	idx := make(map[string]int, len(items))
	for i := range items {
		idx[id(&items[i])] = i
	}
	for _, c := range children {
		if i, ok := idx[c.of]; ok {
			add(&items[i], c.v)
		}
	}
}

func scanBoardStep(sc codec.Scanner) (child[store.TaskStep], error) {
	var (
		s                 child[store.TaskStep]
		started, finished string
	)
	if err := sc.Scan(&s.of, &s.v.N, &s.v.Command, &s.v.Verdict, &s.v.Rule, &s.v.ExitCode, &s.v.Output, &started, &finished); err != nil {
		return s, err
	}
	var errs [2]error
	s.v.Started, errs[0] = codec.ParseTime(started)
	s.v.Finished, errs[1] = codec.ParseTime(finished)
	return s, errors.Join(errs[:]...)
}

const boardStepCols = `run, n, command, verdict, rule, exit_code, output, started, finished`

// withBoardSteps fills the steps of runs; where selects the steps' runs.
func withBoardSteps(ctx context.Context, q Q, runs []store.TaskRun, where string, args ...any) ([]store.TaskRun, error) {
	steps, err := QueryRows(ctx, q, scanBoardStep, `SELECT `+boardStepCols+` FROM board_steps WHERE `+where+` ORDER BY run, n`, args...)
	if err != nil {
		return nil, err
	}
	attach(runs, func(r *store.TaskRun) string { return r.ID }, steps, func(r *store.TaskRun, s store.TaskStep) {
		r.Steps = append(r.Steps, s)
	})
	return runs, nil
}

// getBoardRun reads one run with its steps.
func getBoardRun(ctx context.Context, q Q, id string) (store.TaskRun, error) {
	r, err := scanBoardRun(q.QueryRow(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = ?`, id))
	if err != nil {
		return store.TaskRun{}, notFound(err)
	}
	return firstRun(withBoardSteps(ctx, q, []store.TaskRun{r}, `run = ?`, id))
}

// firstRun is the one run of withBoardSteps' answer.
func firstRun(rs []store.TaskRun, err error) (store.TaskRun, error) {
	if err != nil {
		return store.TaskRun{}, err
	}
	return rs[0], nil
}

// GetRun returns a run with its steps.
func (b *Base) GetRun(ctx context.Context, run string) (store.TaskRun, error) {
	var r store.TaskRun
	err := b.inTx(ctx, TxRead, func(tx Q) error {
		var err error
		r, err = getBoardRun(ctx, tx, run)
		return err
	})
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("get run %s: %w", run, err)
	}
	return r, nil
}

// listRuns lists the runs of one snapshot that where selects, in order,
// each with its steps.
func (b *Base) listRuns(ctx context.Context, where, order string, args ...any) ([]store.TaskRun, error) {
	var rs []store.TaskRun
	err := b.inTx(ctx, TxRead, func(tx Q) error {
		var err error
		rs, err = QueryRows(ctx, tx, scanBoardRun, `SELECT `+boardRunCols+` FROM board_runs WHERE `+where+` ORDER BY `+order, args...)
		if err == nil {
			rs, err = withBoardSteps(ctx, tx, rs, `run IN (SELECT id FROM board_runs WHERE `+where+`)`, args...)
		}
		return err
	})
	return rs, err
}

// TaskRuns lists a task's runs, newest first.
func (b *Base) TaskRuns(ctx context.Context, task string) ([]store.TaskRun, error) {
	rs, err := b.listRuns(ctx, `task = ?`, `started DESC, id DESC`, task)
	if err != nil {
		return nil, fmt.Errorf("runs of task %s: %w", task, err)
	}
	return rs, nil
}

// RunningRuns lists every open run, oldest first.
func (b *Base) RunningRuns(ctx context.Context) ([]store.TaskRun, error) {
	rs, err := b.listRuns(ctx, `status = 'running'`, `started, id`)
	if err != nil {
		return nil, fmt.Errorf("running runs: %w", err)
	}
	return rs, nil
}

// runningRun checks, inside tx, that run exists and is running, locking
// its row, and returns it without steps.
func (b *Base) runningRun(ctx context.Context, tx Q, run string) (store.TaskRun, error) {
	r, err := scanBoardRun(tx.QueryRow(ctx, `SELECT `+boardRunCols+` FROM board_runs WHERE id = ?`+b.d.ForUpdate, run))
	if err != nil {
		return store.TaskRun{}, notFound(err)
	}
	if r.Status != store.TaskRunRunning {
		return r, fmt.Errorf("%w (it %s)", store.ErrTaskRunEnded, r.Status)
	}
	return r, nil
}

// SetRunPID records the worker process of a running run.
func (b *Base) SetRunPID(ctx context.Context, run string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("set pid of run %s: pid %d", run, pid)
	}
	err := b.inTx(ctx, TxWrite, func(tx Q) error {
		if _, err := b.runningRun(ctx, tx, run); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE board_runs SET pid = ? WHERE id = ?`, pid, run)
		return err
	})
	if err != nil {
		return fmt.Errorf("set pid of run %s: %w", run, err)
	}
	return nil
}

// AppendRunStep adds the run's next step; see store.BoardStore.
func (b *Base) AppendRunStep(ctx context.Context, run string, s store.TaskStep) (store.TaskStep, error) {
	out, err := b.appendRunStep(ctx, run, s)
	if err != nil {
		return store.TaskStep{}, fmt.Errorf("record step of run %s: %w", run, err)
	}
	return out, nil
}

func (b *Base) appendRunStep(ctx context.Context, run string, s store.TaskStep) (store.TaskStep, error) {
	s.Started = boardNow(s.Started)
	if s.Finished.IsZero() {
		s.Finished = s.Started
	}
	started, err := codec.Time(s.Started)
	if err != nil {
		return store.TaskStep{}, err
	}
	finished, err := codec.Time(s.Finished)
	if err != nil {
		return store.TaskStep{}, err
	}
	s.Output, _ = store.CapOutput(s.Output)
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		if _, err := b.runningRun(ctx, tx, run); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO board_steps (`+boardStepCols+`)
			VALUES (?, (SELECT coalesce(max(n) + 1, 0) FROM board_steps WHERE run = ?), ?, ?, ?, ?, ?, ?, ?)
			RETURNING n`, run, run, s.Command, s.Verdict, s.Rule, s.ExitCode, s.Output, started, finished).Scan(&s.N)
	})
	if err != nil {
		return store.TaskStep{}, err
	}
	return s, nil
}

// runEnd is how a run ends: as status, moving its task to to (a
// failure: to ready, or to blocked at limit when limit > 0), at at
// (zero: now), with reason as the run's error.
type runEnd struct {
	status store.TaskRunStatus
	to     store.TaskStatus
	reason string
	at     time.Time
	limit  int
	// reclaim ends the run only if its lease has expired, by the lease
	// clock, once its row is locked (errLeaseHeld otherwise).
	reclaim bool
}

// FinishRun ends a running run as succeeded or blocked.
func (b *Base) FinishRun(ctx context.Context, run string, f store.RunFinish) (store.Task, error) {
	e := runEnd{status: f.Status, reason: f.Reason, at: f.At}
	switch {
	case f.Status == store.TaskRunSucceeded && f.Review:
		e.to = store.TaskReview
	case f.Status == store.TaskRunSucceeded:
		e.to = store.TaskDone
	case f.Status == store.TaskRunBlocked:
		e.to = store.TaskBlocked
	default:
		return store.Task{}, fmt.Errorf("finish run %s: cannot finish as %q (want succeeded or blocked; failures are recorded)", run, f.Status)
	}
	t, err := b.endRunTx(ctx, run, e)
	if err != nil {
		return store.Task{}, fmt.Errorf("finish run %s: %w", run, err)
	}
	return t, nil
}

// RecordFailure ends a running run as failed; see store.BoardStore.
func (b *Base) RecordFailure(ctx context.Context, run string, reason string, limit int, at time.Time) (store.Task, error) {
	t, err := b.endRunTx(ctx, run, runEnd{status: store.TaskRunFailed, reason: reason, at: at, limit: limit})
	if err != nil {
		return store.Task{}, fmt.Errorf("record failure of run %s: %w", run, err)
	}
	return t, nil
}

// endRunTx is endRun in a transaction of its own.
func (b *Base) endRunTx(ctx context.Context, run string, e runEnd) (store.Task, error) {
	var t store.Task
	err := b.inTx(ctx, TxWrite, func(tx Q) error {
		var err error
		t, err = b.endRun(ctx, tx, run, e)
		return err
	})
	return t, err
}

// errLeaseHeld: a run to reclaim was renewed meanwhile, or still has
// processes on record.
var errLeaseHeld = errors.New("lease renewed")

// endRun ends a running run and moves its task, inside tx. Rows are
// locked task first, then run, as everywhere else, so two writers
// never deadlock.
func (b *Base) endRun(ctx context.Context, tx Q, run string, e runEnd) (store.Task, error) {
	ts, err := codec.Time(boardNow(e.at))
	if err != nil {
		return store.Task{}, err
	}
	var task string
	if err := tx.QueryRow(ctx, `SELECT task FROM board_runs WHERE id = ?`, run).Scan(&task); err != nil {
		return store.Task{}, notFound(err)
	}
	t, err := b.getBoardTask(ctx, tx, task, true)
	if err != nil {
		return store.Task{}, err
	}
	if _, err := b.runningRun(ctx, tx, run); err != nil {
		return store.Task{}, err
	}
	if e.reclaim {
		now, args, err := b.later(0)
		if err != nil {
			return store.Task{}, err
		}
		var expired bool
		if err := tx.QueryRow(ctx, `SELECT lease IS NOT NULL AND lease < `+now+` FROM board_runs WHERE id = ?`, append(args, run)...).Scan(&expired); err != nil {
			return store.Task{}, err
		}
		if !expired {
			return store.Task{}, errLeaseHeld
		}
	}
	if t.Status != store.TaskRunning || t.Run != run {
		// The schema keeps one open run per running task; this is a
		// store bug, not a race.
		return store.Task{}, fmt.Errorf("task %s is %s with run %q, not running run %s", t.ID, t.Status, t.Run, run)
	}
	to, retries, lastErr := e.to, t.Retries, t.LastError
	if e.status == store.TaskRunFailed {
		retries++
		lastErr = e.reason
		to = store.TaskReady
		if e.limit > 0 && retries >= e.limit {
			to = store.TaskBlocked
		}
	} else if to == store.TaskBlocked {
		lastErr = e.reason
	}
	if !store.CanMove(store.TaskRunning, to, store.ByRun) {
		return store.Task{}, fmt.Errorf("%w: running → %s", store.ErrTransition, to)
	}
	if _, err := tx.Exec(ctx, `UPDATE board_runs SET status = ?, finished = ?, error = ? WHERE id = ?`, string(e.status), ts, e.reason, run); err != nil {
		return store.Task{}, err
	}
	if _, err := tx.Exec(ctx, `UPDATE board_tasks SET status = ?, run = '', retries = ?, last_error = ?, updated = ? WHERE id = ?`,
		string(to), retries, lastErr, ts, t.ID); err != nil {
		return store.Task{}, err
	}
	return b.getBoardTask(ctx, tx, t.ID, false)
}

// RenewRun extends the lease of a running run held by holder to ttl
// from now, by the lease clock (Dialect.Later).
func (b *Base) RenewRun(ctx context.Context, run, holder string, ttl time.Duration) (store.TaskRun, error) {
	until, args, err := b.later(ttl)
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("renew the lease of run %s: %w", run, err)
	}
	var r store.TaskRun
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var err error
		if r, err = b.runningRun(ctx, tx, run); err != nil {
			return err
		}
		if r.Holder != holder {
			return fmt.Errorf("%w: run %s is held by %q", store.ErrLeaseLost, run, r.Holder)
		}
		r, err = scanBoardRun(tx.QueryRow(ctx, `UPDATE board_runs SET lease = `+until+` WHERE id = ? RETURNING `+boardRunCols, append(args, run)...))
		return err
	})
	if err != nil {
		return store.TaskRun{}, fmt.Errorf("renew the lease of run %s: %w", run, err)
	}
	return r, nil
}

// ReclaimRuns ends the running runs whose lease expired by the lease
// clock, as failed, each in its own transaction that checks the lease
// again under the rows' locks: a renewal that got there first keeps
// the run, and of two reclaimers the second finds the run ended. A run
// that process records still name (on whatever machine) is left to its
// machine's fence: it is reclaimed on a later pass, once they are gone.
func (b *Base) ReclaimRuns(ctx context.Context, reason string, limit int, at time.Time) ([]store.TaskRun, error) {
	now, args, err := b.later(0)
	if err != nil {
		return nil, fmt.Errorf("reclaim runs whose lease expired: %w", err)
	}
	ids, err := QueryRows(ctx, b.r, ScanString, `SELECT id FROM board_runs
		WHERE status = 'running' AND lease IS NOT NULL AND lease < `+now+`
		AND NOT EXISTS (SELECT 1 FROM processes WHERE run = 'kanban:' || board_runs.id)
		ORDER BY started, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("reclaim runs whose lease expired: %w", b.note(err))
	}
	out := []store.TaskRun{}
	for _, id := range ids {
		var r store.TaskRun
		err := b.inTx(ctx, TxWrite, func(tx Q) error {
			var held bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM processes WHERE run = ?)`, store.KanbanRunKey(id)).Scan(&held); err != nil {
				return err
			}
			if held {
				return errLeaseHeld
			}
			e := runEnd{status: store.TaskRunFailed, reason: reason, at: at, limit: limit, reclaim: true}
			if _, err := b.endRun(ctx, tx, id, e); err != nil {
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
func (b *Base) MintToken(ctx context.Context, tok store.WorkerToken) error {
	if err := b.mintToken(ctx, tok); err != nil {
		return fmt.Errorf("mint token for run %s: %w", tok.Run, err)
	}
	return nil
}

func (b *Base) mintToken(ctx context.Context, tok store.WorkerToken) error {
	if len(tok.Hash) != 64 {
		return errors.New("want the hex SHA-256 of the token")
	}
	created, err := codec.Time(boardNow(tok.Created))
	if err != nil {
		return err
	}
	expires, err := codec.Time(tok.Expires)
	if err != nil {
		return err
	}
	return b.inTx(ctx, TxWrite, func(tx Q) error {
		r, err := b.runningRun(ctx, tx, tok.Run)
		if err != nil {
			return err
		}
		if r.Task != tok.Task {
			return fmt.Errorf("run %s is of task %s, not %s", r.ID, r.Task, tok.Task)
		}
		_, err = tx.Exec(ctx, `INSERT INTO board_tokens (hash, task, run, created, expires) VALUES (?, ?, ?, ?, ?)`,
			tok.Hash, tok.Task, tok.Run, created, expires)
		return err
	})
}

// ConsumeToken uses a worker token once; see store.BoardStore. The
// token's row is locked, so of two hosts shown one token, one uses it.
func (b *Base) ConsumeToken(ctx context.Context, hash, task string, at time.Time) (store.WorkerToken, error) {
	tok, refusal, err := b.consumeToken(ctx, hash, task, boardNow(at))
	switch {
	case err != nil:
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w", task, err)
	case refusal != "":
		return store.WorkerToken{}, fmt.Errorf("consume worker token for task %s: %w: %s", task, store.ErrTokenRefused, refusal)
	}
	return tok, nil
}

// consumeToken burns the token and says why it is refused, if it is:
// every outcome but an unknown or used token uses it up.
func (b *Base) consumeToken(ctx context.Context, hash, task string, at time.Time) (tok store.WorkerToken, refusal string, err error) {
	ts, err := codec.Time(at)
	if err != nil {
		return store.WorkerToken{}, "", err
	}
	err = b.inTx(ctx, TxWrite, func(tx Q) error {
		var (
			created, expires string
			used             *string
		)
		err := tx.QueryRow(ctx, `SELECT hash, task, run, created, expires, used FROM board_tokens WHERE hash = ?`+b.d.ForUpdate, hash).
			Scan(&tok.Hash, &tok.Task, &tok.Run, &created, &expires, &used)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			refusal = "unknown"
			return nil
		case err != nil:
			return err
		case used != nil:
			refusal = "already used"
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE board_tokens SET used = ? WHERE hash = ?`, ts, hash); err != nil {
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
			if err := tx.QueryRow(ctx, `SELECT status FROM board_runs WHERE id = ?`, tok.Run).Scan(&status); err != nil {
				return err
			}
			if store.TaskRunStatus(status) != store.TaskRunRunning {
				refusal = "its run has ended"
			}
		}
		return nil
	})
	return tok, refusal, err
}
