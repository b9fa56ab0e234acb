package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sentinel errors of the kanban board.
var (
	// ErrTransition: the task is not in a status the requested move
	// starts from (the board changed underneath, or the move is not in
	// TaskTransitions for that actor).
	ErrTransition = errors.New("illegal task transition")
	// ErrNothingReady: ClaimTask found no ready task.
	ErrNothingReady = errors.New("no ready task")
	// ErrTaskRunEnded: the task run is no longer running; whoever ended
	// it first (worker, dispatcher, operator) won, and the later end
	// changes nothing.
	ErrTaskRunEnded = errors.New("task run already ended")
	// ErrTokenRefused: a worker token is unknown, used, expired, bound to
	// another task, or its run has ended. One error for every case, so a
	// caller learns nothing about which.
	ErrTokenRefused = errors.New("worker token refused")
)

// TaskStatus is where a task is on the board.
type TaskStatus string

// Task statuses.
const (
	TaskTodo    TaskStatus = "todo"    // waiting for its parents
	TaskReady   TaskStatus = "ready"   // every parent done; a worker may claim it
	TaskRunning TaskStatus = "running" // claimed: exactly one run is open
	TaskBlocked TaskStatus = "blocked" // needs a human (denied action, failure limit, worker's block)
	TaskReview  TaskStatus = "review"  // finished, waiting for a human to accept
	TaskDone    TaskStatus = "done"    // finished; children may start
)

// TaskStatuses lists every status in board order.
func TaskStatuses() []TaskStatus {
	return []TaskStatus{TaskTodo, TaskReady, TaskRunning, TaskBlocked, TaskReview, TaskDone}
}

// Valid reports whether s is a known status.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskTodo, TaskReady, TaskRunning, TaskBlocked, TaskReview, TaskDone:
		return true
	}
	return false
}

// Mover is who moves a task: each legal transition belongs to exactly
// one, and each store method moves only as its mover.
type Mover string

// Movers.
const (
	// ByPromote: the promoter (Promote, AddTask) — todo → ready once every
	// parent is done.
	ByPromote Mover = "promote"
	// ByClaim: the dispatcher's atomic claim (ClaimTask) — ready →
	// running, with a new run.
	ByClaim Mover = "claim"
	// ByRun: the end of a run (FinishRun, RecordFailure).
	ByRun Mover = "run"
	// ByOperator: a human through the CLI or console (SetTaskStatus).
	ByOperator Mover = "operator"
)

// Transition is one legal move.
type Transition struct {
	From, To TaskStatus
	By       Mover
}

// taskTransitions is the one table of legal moves; every BoardStore
// enforces it inside the transaction that writes the move, and the
// conformance suite checks every pair of statuses against it. Done is
// final.
var taskTransitions = []Transition{
	{TaskTodo, TaskReady, ByPromote},
	{TaskTodo, TaskBlocked, ByOperator},
	{TaskTodo, TaskDone, ByOperator},
	{TaskReady, TaskRunning, ByClaim},
	{TaskReady, TaskBlocked, ByOperator},
	{TaskReady, TaskDone, ByOperator},
	{TaskRunning, TaskDone, ByRun},    // succeeded
	{TaskRunning, TaskReview, ByRun},  // succeeded, review wanted
	{TaskRunning, TaskBlocked, ByRun}, // worker blocked, or the failure limit
	{TaskRunning, TaskReady, ByRun},   // failed, retries left
	{TaskRunning, TaskBlocked, ByOperator},
	{TaskRunning, TaskDone, ByOperator},
	{TaskBlocked, TaskTodo, ByOperator}, // unblock; the promoter takes it on
	{TaskBlocked, TaskDone, ByOperator},
	{TaskReview, TaskDone, ByOperator},
	{TaskReview, TaskReady, ByOperator}, // run it again
	{TaskReview, TaskBlocked, ByOperator},
}

// TaskTransitions returns the table of legal moves.
func TaskTransitions() []Transition { return append([]Transition(nil), taskTransitions...) }

// CanMove reports whether by may move a task from from to to.
func CanMove(from, to TaskStatus, by Mover) bool {
	for _, t := range taskTransitions {
		if t.From == from && t.To == to && t.By == by {
			return true
		}
	}
	return false
}

// Workspace values: a scratch directory the host makes for the task, or
// an absolute directory.
const (
	WorkspaceScratch   = "scratch"
	WorkspaceDirPrefix = "dir:"
)

// ValidWorkspace reports whether w is "scratch" or "dir:" followed by an
// absolute, clean path.
func ValidWorkspace(w string) bool {
	if w == WorkspaceScratch {
		return true
	}
	p, ok := strings.CutPrefix(w, WorkspaceDirPrefix)
	return ok && strings.HasPrefix(p, "/") && !strings.ContainsRune(p, 0) && cleanAbs(p)
}

// cleanAbs reports whether p has no empty, "." or ".." element and no
// trailing slash (except "/" itself).
func cleanAbs(p string) bool {
	if p == "/" {
		return true
	}
	for _, e := range strings.Split(p[1:], "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// Task is one card on the board.
type Task struct {
	ID     string     `json:"id"`
	Title  string     `json:"title"`
	Body   string     `json:"body"`
	Status TaskStatus `json:"status"`
	// Workspace is "scratch" or "dir:/abs/path".
	Workspace string `json:"workspace"`
	// Script is the ordered shell command lines a worker runs.
	Script []string `json:"script"`
	// Prompt, when set (and Script empty), makes a prompt task: the
	// worker runs the agent with it, as the run's kanban owner.
	Prompt string `json:"prompt,omitempty"`
	// Parents are the tasks this one waits for (ready when all are done).
	Parents []string `json:"parents"`
	// Retries counts failed runs since the task was added or last
	// unblocked.
	Retries   int    `json:"retries"`
	LastError string `json:"last_error,omitempty"`
	// Run is the open run while the task is running, else "".
	Run     string    `json:"run,omitempty"`
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
}

// TaskFilter selects tasks; zero fields match everything.
type TaskFilter struct {
	Status TaskStatus
}

// TaskComment is one message on a task: the protocol between humans and
// workers.
type TaskComment struct {
	ID     int64     `json:"id"`
	Task   string    `json:"task"`
	Author string    `json:"author"`
	Body   string    `json:"body"`
	Time   time.Time `json:"time"`
}

// TaskRunStatus is where a task run is.
type TaskRunStatus string

// Task run statuses. Running is the only one that changes, once.
const (
	TaskRunRunning   TaskRunStatus = "running"
	TaskRunSucceeded TaskRunStatus = "succeeded"
	TaskRunFailed    TaskRunStatus = "failed"
	TaskRunBlocked   TaskRunStatus = "blocked"
)

// TaskStep is one shell step of a task run as it ended: the same type as
// a cron run's step, so `warden kanban show` and `warden cron history`
// print steps alike.
type TaskStep = CronStep

// TaskRun is one attempt at a task by one worker.
type TaskRun struct {
	ID       string        `json:"run_id"`
	Task     string        `json:"task"`
	Status   TaskRunStatus `json:"status"`
	Started  time.Time     `json:"started_at"`
	Finished time.Time     `json:"finished_at,omitzero"`
	Steps    []TaskStep    `json:"steps"`
	// Error says why a run failed or blocked.
	Error string `json:"error,omitempty"`
	// Log is the worker's output file.
	Log string `json:"log"`
	// PID is the worker process, 0 until it was spawned.
	PID int `json:"pid,omitempty"`
	// Holder is who claimed the run (a host's id), and LeaseExpires
	// when its claim lapses unless renewed (the store's clock); zero
	// for a claim without a lease.
	Holder       string    `json:"holder,omitempty"`
	LeaseExpires time.Time `json:"lease_expires_at,omitzero"`
}

// TaskClaim is what the dispatcher brings to a claim.
type TaskClaim struct {
	// Run is the new run's id.
	Run string
	// Log is where the worker's output will go.
	Log string
	At  time.Time
	// Task, if set, claims that task only (an operator issuing it to a
	// remote worker): ErrNothingReady unless it is ready.
	Task string
	// Holder names the claimer (a host's id).
	Holder string
	// Lease, when positive, makes the claim lapse that long after the
	// claim (by the store's clock) unless RenewRun extends it: a
	// claimer that dies loses the task to ReclaimRuns. Zero claims
	// without a lease.
	Lease time.Duration
}

// RunFinish ends a run that did not fail.
type RunFinish struct {
	// Status is TaskRunSucceeded or TaskRunBlocked.
	Status TaskRunStatus
	// Review sends a succeeded task to review instead of done.
	Review bool
	// Reason is why it blocked; it becomes the task's LastError.
	Reason string
	At     time.Time
}

// WorkerToken is a one-time credential bound to one task run. The store
// keeps only the hash of the secret.
type WorkerToken struct {
	// Hash is the hex SHA-256 of the secret the worker holds.
	Hash    string    `json:"hash"`
	Task    string    `json:"task"`
	Run     string    `json:"run"`
	Created time.Time `json:"created_at"`
	Expires time.Time `json:"expires_at"`
	// Used is when the token was consumed; zero while unused.
	Used time.Time `json:"used_at,omitzero"`
}

// BoardStore keeps the kanban board: tasks, their dependencies, comments,
// runs with their steps, and worker tokens. Every method that moves a
// task does so in one transaction, checked against TaskTransitions.
type BoardStore interface {
	// AddTask stores a new task with its parents (which must exist). It
	// is ready at once when every parent is done (or it has none), todo
	// otherwise; t.Status, Retries, LastError and Run are ignored. It
	// returns the task as stored.
	AddTask(ctx context.Context, t Task) (Task, error)
	// GetTask returns the task with its parents, or ErrNotFound.
	GetTask(ctx context.Context, id string) (Task, error)
	// ListTasks lists tasks in id order.
	ListTasks(ctx context.Context, f TaskFilter) ([]Task, error)
	// SetTaskStatus moves a task as the operator (ByOperator rows of
	// TaskTransitions), or returns ErrTransition. Moving a running task
	// ends its open run as blocked with reason. Unblocking (blocked →
	// todo) resets Retries and LastError; the promoter then moves it on.
	SetTaskStatus(ctx context.Context, id string, to TaskStatus, reason string, at time.Time) (Task, error)
	// AddComment appends a comment and returns it with its id.
	AddComment(ctx context.Context, c TaskComment) (TaskComment, error)
	// Comments lists a task's comments, oldest first.
	Comments(ctx context.Context, task string) ([]TaskComment, error)
	// Promote moves every todo task whose parents are all done to ready
	// and returns their ids.
	Promote(ctx context.Context, at time.Time) ([]string, error)
	// ClaimTask atomically takes the oldest ready task (or c.Task, if it
	// is ready): ready → running and a new running run, in one
	// transaction. Two claimers never get the same task. No ready task is
	// ErrNothingReady.
	ClaimTask(ctx context.Context, c TaskClaim) (Task, TaskRun, error)
	// SetRunPID records the worker process of a running run.
	SetRunPID(ctx context.Context, run string, pid int) error
	// AppendRunStep adds the run's next step (its N is assigned) and
	// returns it; ErrTaskRunEnded unless the run is running. The output
	// is capped with CapOutput.
	AppendRunStep(ctx context.Context, run string, s TaskStep) (TaskStep, error)
	// FinishRun ends a running run as succeeded (task → done or review)
	// or blocked (task → blocked, LastError = reason). A run that already
	// ended is ErrTaskRunEnded.
	FinishRun(ctx context.Context, run string, f RunFinish) (Task, error)
	// RecordFailure ends a running run as failed: its task goes back to
	// ready with Retries+1, or to blocked with the reason once Retries+1
	// reaches limit (limit <= 0: never). A run that already ended is
	// ErrTaskRunEnded.
	RecordFailure(ctx context.Context, run string, reason string, limit int, at time.Time) (Task, error)
	// GetRun returns a run with its steps.
	GetRun(ctx context.Context, run string) (TaskRun, error)
	// TaskRuns lists a task's runs with their steps, newest first.
	TaskRuns(ctx context.Context, task string) ([]TaskRun, error)
	// RunningRuns lists every open run, oldest first.
	RunningRuns(ctx context.Context) ([]TaskRun, error)
	// RenewRun extends the lease of a running run held by holder to ttl
	// from now (the store's clock) and returns the run without its
	// steps. A run that ended (reclaimed, finished, moved by an
	// operator) is ErrTaskRunEnded; one held by another is
	// ErrLeaseLost.
	RenewRun(ctx context.Context, run, holder string, ttl time.Duration) (TaskRun, error)
	// ReclaimRuns ends every running run whose lease expired (by the
	// store's clock) as failed with reason, each as RecordFailure does
	// with limit, and returns the runs it ended. Of two concurrent
	// reclaimers, each run goes to one. A run that process records
	// name (KanbanRunKey) is not ended: it waits for a fence to forget
	// them.
	ReclaimRuns(ctx context.Context, reason string, limit int, at time.Time) ([]TaskRun, error)
	// MintToken stores a token for a running run.
	MintToken(ctx context.Context, tok WorkerToken) error
	// ConsumeToken uses the token with hash for task: it must exist, be
	// unused and unexpired at at, be bound to task, and its run must
	// still be running. It is marked used whatever the outcome once it
	// was found, so a token presented for another task is burnt. Every
	// refusal is ErrTokenRefused.
	ConsumeToken(ctx context.Context, hash, task string, at time.Time) (WorkerToken, error)
}

// CheckNewTask checks a task about to be added (an id, a title, a
// valid workspace, script lines that say something, a script or a
// prompt but not both, not a parent of itself) and returns it with an
// empty script rather than none, and its parents sorted without
// repeats: what both stores insert.
func CheckNewTask(t Task) (Task, []string, error) {
	switch {
	case t.ID == "":
		return Task{}, nil, errors.New("empty id")
	case strings.TrimSpace(t.Title) == "":
		return Task{}, nil, errors.New("empty title")
	case !ValidWorkspace(t.Workspace):
		return Task{}, nil, fmt.Errorf("workspace %q: want %q or %q followed by an absolute clean path", t.Workspace, WorkspaceScratch, WorkspaceDirPrefix)
	}
	for i, l := range t.Script {
		if strings.TrimSpace(l) == "" {
			return Task{}, nil, fmt.Errorf("script line %d is empty", i+1)
		}
	}
	if t.Prompt != "" && len(t.Script) > 0 {
		return Task{}, nil, errors.New("a task has a script or a prompt, not both")
	}
	if t.Script == nil {
		t.Script = []string{}
	}
	parents := slices.Clone(t.Parents)
	slices.Sort(parents)
	parents = slices.Compact(parents)
	if slices.Contains(parents, t.ID) {
		return Task{}, nil, errors.New("a task cannot wait for itself")
	}
	return t, parents, nil
}
