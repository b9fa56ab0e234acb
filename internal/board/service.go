package board

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Service is the board's operations over a store, shared by the CLI, the
// console and the dispatcher. It is safe for concurrent use.
type Service struct {
	st  store.BoardStore
	ids *IDs
	now func() time.Time
}

// Options configure a Service.
type Options struct {
	Store store.BoardStore
	// IDs makes task ids; nil means a new IDs on Now.
	IDs *IDs
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = &IDs{Now: o.Now}
	}
	return &Service{st: o.Store, ids: o.IDs, now: o.Now}
}

// NewTask is what a human gives to add a task.
type NewTask struct {
	Title string
	Body  string
	// Workspace is "", "scratch" or "dir:/abs/path".
	Workspace string
	// Script is the command lines the worker runs, in order.
	Script []string
	// Prompt, instead of Script, makes the worker run the agent.
	Prompt string
	// After are the parents: the task is ready when all are done.
	After []string
}

// Add adds a task and returns it as stored (ready if it has no parents
// that are not done, todo otherwise).
func (s *Service) Add(ctx context.Context, n NewTask) (store.Task, error) {
	ws, err := ParseWorkspace(n.Workspace)
	if err != nil {
		return store.Task{}, fmt.Errorf("add task: %w", err)
	}
	if strings.TrimSpace(n.Title) == "" {
		return store.Task{}, errors.New("add task: empty title")
	}
	t, err := s.st.AddTask(ctx, store.Task{
		ID: s.ids.New(), Title: n.Title, Body: n.Body, Workspace: ws,
		Script: n.Script, Prompt: n.Prompt, Parents: n.After, Created: s.now(),
	})
	if err != nil {
		return store.Task{}, err
	}
	return t, nil
}

// Get returns one task.
func (s *Service) Get(ctx context.Context, id string) (store.Task, error) {
	return s.st.GetTask(ctx, id)
}

// List lists tasks, all or of one status, in id (creation) order.
func (s *Service) List(ctx context.Context, status store.TaskStatus) ([]store.Task, error) {
	if status != "" && !status.Valid() {
		return nil, fmt.Errorf("list tasks: unknown status %q", status)
	}
	return s.st.ListTasks(ctx, store.TaskFilter{Status: status})
}

// Card is a task with its runs (newest first) and comments (oldest
// first): what `warden kanban show` and the console's drawer print.
type Card struct {
	store.Task
	Runs     []store.TaskRun     `json:"runs"`
	Comments []store.TaskComment `json:"comments"`
}

// Show returns a task's card.
func (s *Service) Show(ctx context.Context, id string) (Card, error) {
	t, err := s.st.GetTask(ctx, id)
	if err != nil {
		return Card{}, err
	}
	runs, err := s.st.TaskRuns(ctx, id)
	if err != nil {
		return Card{}, err
	}
	cs, err := s.st.Comments(ctx, id)
	if err != nil {
		return Card{}, err
	}
	return Card{Task: t, Runs: runs, Comments: cs}, nil
}

// Comment adds a comment by author.
func (s *Service) Comment(ctx context.Context, id, author, body string) (store.TaskComment, error) {
	if strings.TrimSpace(body) == "" {
		return store.TaskComment{}, fmt.Errorf("comment on task %s: empty comment", id)
	}
	return s.st.AddComment(ctx, store.TaskComment{Task: id, Author: author, Body: body, Time: s.now()})
}

// Apply moves a task by an operator's verb. reason, if set, is recorded
// as a comment by author (and, for block, as the task's last error).
// Unblocking promotes at once, so a task whose parents are done is
// ready again when Apply returns.
func (s *Service) Apply(ctx context.Context, id string, v Verb, author, reason string) (store.Task, error) {
	to, err := v.Target()
	if err != nil {
		return store.Task{}, fmt.Errorf("%s task %s: %w", v, id, err)
	}
	t, err := s.st.SetTaskStatus(ctx, id, to, reason, s.now())
	if err != nil {
		return store.Task{}, err
	}
	if reason != "" {
		if _, err := s.st.AddComment(ctx, store.TaskComment{Task: id, Author: author, Body: string(v) + ": " + reason, Time: s.now()}); err != nil {
			return t, err
		}
	}
	if v == Unblock {
		if _, err := s.st.Promote(ctx, s.now()); err != nil {
			return t, err
		}
		return s.st.GetTask(ctx, id)
	}
	return t, nil
}

// NewID returns the board's next id: tasks and runs take theirs from the
// service's one generator, so ids stay ordered across the host.
func (s *Service) NewID() string { return s.ids.New() }

// Promote moves every todo task whose parents are done to ready.
func (s *Service) Promote(ctx context.Context) ([]string, error) {
	return s.st.Promote(ctx, s.now())
}

// The run operations below are a worker's (internal/workerapi): the
// host's record of one run of a task, kept through the same service, and
// so the same clock, as the operator's verbs.

// Redeem uses the worker token with hash for task: burnt by this first
// use whatever the outcome (store.BoardStore.ConsumeToken).
func (s *Service) Redeem(ctx context.Context, hash, task string) (store.WorkerToken, error) {
	return s.st.ConsumeToken(ctx, hash, task, s.now())
}

// Run returns one run with its steps.
func (s *Service) Run(ctx context.Context, id string) (store.TaskRun, error) {
	return s.st.GetRun(ctx, id)
}

// Step adds run's next step; store.ErrTaskRunEnded once the run ended.
func (s *Service) Step(ctx context.Context, run string, st store.TaskStep) (store.TaskStep, error) {
	return s.st.AppendRunStep(ctx, run, st)
}

// Finish ends a running run as succeeded or blocked, now.
func (s *Service) Finish(ctx context.Context, run string, f store.RunFinish) (store.Task, error) {
	f.At = s.now()
	return s.st.FinishRun(ctx, run, f)
}

// Fail ends a running run as failed, now: its task is ready again, or
// blocked once limit failures are reached (zero or less: never).
func (s *Service) Fail(ctx context.Context, run, reason string, limit int) (store.Task, error) {
	return s.st.RecordFailure(ctx, run, reason, limit, s.now())
}
