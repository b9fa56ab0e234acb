package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// cronRunsShown is how many recent runs the cron page shows.
const cronRunsShown = 25

// cronData is the cron page.
type cronData struct {
	// Available is false when the host runs no scheduler.
	Available bool
	Jobs      []store.CronJob
	// Job filters Runs to one job ("" for all).
	Job  string
	Runs []store.CronRun
	Now  time.Time
}

// cronPage lists the jobs (schedule, next run, enabled, a Run now
// button) and the recent runs with their steps; ?job=NAME shows that
// job's runs only.
func (c *Console) cronPage(w http.ResponseWriter, r *http.Request, a *authn) {
	d := cronData{Available: c.o.Cron != nil, Job: r.URL.Query().Get("job"), Now: c.o.Now()}
	if d.Available {
		var err error
		if d.Jobs, err = c.o.Cron.Jobs(r.Context()); err != nil {
			c.fail(w, r, fmt.Errorf("list cron jobs: %w", err))
			return
		}
		if d.Runs, err = c.o.Cron.Runs(r.Context(), d.Job, cronRunsShown); err != nil {
			c.fail(w, r, fmt.Errorf("list cron runs: %w", err))
			return
		}
	}
	c.render(w, r, http.StatusOK, "cron", c.pageFor(a, "cron", "Cron", d))
}

// runCron starts a run of the job in the path now, as the operator.
func (c *Console) runCron(w http.ResponseWriter, r *http.Request, a *authn) {
	name := r.PathValue("name")
	if c.o.Cron == nil {
		c.done(w, r, a, "/cron", http.StatusServiceUnavailable, "error", "Cron is not available on this host.")
		return
	}
	// A scheduler that has not started yet is waited for briefly.
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	id, err := c.o.Cron.RunNow(ctx, name)
	var run store.CronRun
	if err == nil {
		run, err = c.o.Cron.Run(r.Context(), id)
	}
	back := "/cron" + queryOf("job", name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.done(w, r, a, "/cron", http.StatusNotFound, "late", fmt.Sprintf("There is no cron job %q (removed?).", name))
	case errors.Is(err, surface.ErrNotRunning):
		c.done(w, r, a, "/cron", http.StatusServiceUnavailable, "error", "The cron scheduler has stopped (the host is shutting down).")
	case err != nil:
		c.fail(w, r, fmt.Errorf("run cron job %s: %w", name, err))
	case run.Status == store.RunSkipped:
		c.log.InfoContext(r.Context(), "cron run from the console skipped", "job", name, "run", id, "reason", run.Error)
		c.done(w, r, a, back, http.StatusConflict, "late", fmt.Sprintf("Run %s of %s was skipped: %s.", id, name, run.Error))
	default:
		c.log.InfoContext(r.Context(), "cron run started from the console", "job", name, "run", id)
		c.done(w, r, a, back, http.StatusAccepted, "ok", fmt.Sprintf("Started run %s of %s.", id, name))
	}
}
