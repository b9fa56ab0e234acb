package hostsurface

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Board is surface.Board over the host's one board service.
type Board struct{ svc *board.Service }

var _ surface.Board = Board{}

// NewBoard returns the board view over svc; nil (no board) when svc is
// nil, so a surface sees a host without a board as one.
func NewBoard(svc *board.Service) surface.Board {
	if svc == nil {
		return nil
	}
	return Board{svc: svc}
}

// Tasks implements surface.Board.
func (b Board) Tasks(ctx context.Context) ([]store.Task, error) {
	return b.svc.List(ctx, "")
}

// Card implements surface.Board.
func (b Board) Card(ctx context.Context, id string) (surface.Card, error) {
	c, err := b.svc.Show(ctx, id)
	if err != nil {
		return surface.Card{}, err
	}
	return surface.Card{Task: c.Task, Runs: c.Runs, Comments: c.Comments}, nil
}

// Comment implements surface.Board: a task that does not exist is
// store.ErrNotFound, not a comment on nothing.
func (b Board) Comment(ctx context.Context, id, author, body string) error {
	if _, err := b.svc.Get(ctx, id); err != nil {
		return fmt.Errorf("get task %s: %w", id, err)
	}
	_, err := b.svc.Comment(ctx, id, author, body)
	return err
}

// Scheduler is what the cron view needs of the scheduler
// (*cron.Scheduler).
type Scheduler interface {
	RunNow(ctx context.Context, name string, parent owner.Owner) (string, error)
}

// CronRuns reads cron jobs and their runs (store.CronStore).
type CronRuns interface {
	ListCronJobs(ctx context.Context) ([]store.CronJob, error)
	ListCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error)
	GetCronRun(ctx context.Context, id string) (store.CronRun, error)
}

// Cron is surface.Cron over the scheduler and the store it keeps its
// jobs and runs in.
type Cron struct {
	sched Scheduler
	st    CronRuns
}

var _ surface.Cron = Cron{}

// NewCron returns the cron view; nil (no scheduler) when either part
// is nil.
func NewCron(sched Scheduler, st CronRuns) surface.Cron {
	if sched == nil || st == nil {
		return nil
	}
	return Cron{sched: sched, st: st}
}

// Jobs implements surface.Cron.
func (c Cron) Jobs(ctx context.Context) ([]store.CronJob, error) { return c.st.ListCronJobs(ctx) }

// Runs implements surface.Cron.
func (c Cron) Runs(ctx context.Context, job string, limit int) ([]store.CronRun, error) {
	return c.st.ListCronRuns(ctx, job, limit)
}

// Run implements surface.Cron.
func (c Cron) Run(ctx context.Context, id string) (store.CronRun, error) {
	return c.st.GetCronRun(ctx, id)
}

// RunNow implements surface.Cron: the zero parent makes the run's owner
// cron(job, run) with no parent.
func (c Cron) RunNow(ctx context.Context, name string) (string, error) {
	if err := cron.ValidName(name); err != nil {
		return "", fmt.Errorf("%w: %w", store.ErrNotFound, err) // no job can have that name
	}
	id, err := c.sched.RunNow(ctx, name, owner.Owner{})
	if errors.Is(err, cron.ErrNotRunning) {
		err = fmt.Errorf("%w: %w", surface.ErrNotRunning, err)
	}
	return id, err
}
