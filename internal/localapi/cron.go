package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// Cron is the host's cron scheduler (*cron.Scheduler) as the admin API
// uses it.
type Cron interface {
	// AddJob checks, stores and schedules a new job.
	AddJob(ctx context.Context, j store.CronJob) (store.CronJob, error)
	// RunNow starts a run of the job outside its schedule; the zero
	// parent means an operator asked (owner cron, no parent).
	RunNow(ctx context.Context, name string, parent owner.Owner) (string, error)
	// Wait blocks until the run has ended, or ctx ends.
	Wait(ctx context.Context, id string) (store.CronRun, error)
}

var _ Cron = (*cron.Scheduler)(nil)

// CronStore is what the admin API reads and deletes of the cron jobs
// and their runs.
type CronStore interface {
	ListCronJobs(ctx context.Context) ([]store.CronJob, error)
	GetCronJob(ctx context.Context, name string) (store.CronJob, error)
	DeleteCronJob(ctx context.Context, name string) error
	GetCronRun(ctx context.Context, id string) (store.CronRun, error)
	ListCronRuns(ctx context.Context, job string, limit int) ([]store.CronRun, error)
}

var _ CronStore = store.CronStore(nil)

// cronRoutes registers the cron endpoints.
//
// GET /v1/cron/runs/{id} and GET /v1/cron/{name}/history overlap on
// /v1/cron/runs/history, which net/http refuses to register as two
// patterns; the second is registered as /v1/cron/{name}/{what}, and a
// run id "history" (never a real one: run ids are ULIDs) means the
// history of a job named "runs".
func (s *Server) cronRoutes() {
	s.mux.HandleFunc("GET /v1/cron", s.cronList)
	s.mux.HandleFunc("POST /v1/cron", s.cronAdd)
	s.mux.HandleFunc("DELETE /v1/cron/{name}", s.cronDelete)
	s.mux.HandleFunc("POST /v1/cron/{name}/run", s.cronRun)
	s.mux.HandleFunc("GET /v1/cron/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id == "history" {
			s.cronHistory(w, r, "runs")
			return
		}
		s.cronGetRun(w, r)
	})
	s.mux.HandleFunc("GET /v1/cron/{name}/{what}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("what") != "history" {
			http.NotFound(w, r)
			return
		}
		s.cronHistory(w, r, r.PathValue("name"))
	})
}

// cronReady answers 503 when the host runs no scheduler.
func (s *Server) cronReady(w http.ResponseWriter) bool {
	if s.o.Cron == nil || s.o.CronStore == nil {
		writeError(w, http.StatusServiceUnavailable, "cron is not available on this host")
		return false
	}
	return true
}

// noJob is the 404 for an unknown job name.
func noJob(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("no cron job %q (warden cron list shows the jobs)", name))
}

func (s *Server) cronList(w http.ResponseWriter, r *http.Request) {
	if !s.cronReady(w) {
		return
	}
	jobs, err := s.o.CronStore.ListCronJobs(r.Context())
	writeList(s, w, r, "list cron jobs", jobs, err)
}

// CronJobOf turns an add request into the job to store: the schedule
// from Schedule or Every, the policies as given (defaults are filled in
// by cron.Prepare), enabled. It checks what the request alone can get
// wrong; cron.Prepare checks the name and parses the schedule.
func CronJobOf(req CronAddRequest) (store.CronJob, error) {
	spec := strings.TrimSpace(req.Schedule)
	every := strings.TrimSpace(req.Every)
	switch {
	case spec != "" && every != "":
		return store.CronJob{}, errors.New("give a schedule or every, not both")
	case spec == "" && every == "":
		return store.CronJob{}, errors.New("give a schedule (a cron spec such as \"0 3 * * *\" or @daily) or every (a duration such as 5m)")
	case every != "":
		spec = "@every " + every
	}
	kind := store.CronScript
	switch prompt := strings.TrimSpace(req.Prompt); {
	case prompt != "" && len(req.Steps) > 0:
		return store.CronJob{}, errors.New("give steps (a script job) or a prompt (an agent job), not both")
	case prompt != "":
		kind, req.Steps = store.CronPrompt, []string{prompt}
	case len(req.Steps) == 0:
		return store.CronJob{}, errors.New("a job needs at least one step, or a prompt")
	}
	for i, st := range req.Steps {
		if strings.TrimSpace(st) == "" {
			return store.CronJob{}, fmt.Errorf("step %d is empty", i+1)
		}
	}
	switch store.Overlap(req.Overlap) {
	case "", store.OverlapSkip, store.OverlapAllow:
	default:
		return store.CronJob{}, fmt.Errorf("overlap must be %s or %s, not %q", store.OverlapSkip, store.OverlapAllow, req.Overlap)
	}
	switch store.CatchUp(req.CatchUp) {
	case "", store.CatchUpOnce, store.CatchUpSkip:
	default:
		return store.CronJob{}, fmt.Errorf("catch_up must be %s or %s, not %q", store.CatchUpOnce, store.CatchUpSkip, req.CatchUp)
	}
	return store.CronJob{
		Name: req.Name, Schedule: spec, TZ: strings.TrimSpace(req.TZ), Kind: kind,
		Steps: req.Steps, Overlap: store.Overlap(req.Overlap), CatchUp: store.CatchUp(req.CatchUp), Enabled: true,
	}, nil
}

func (s *Server) cronAdd(w http.ResponseWriter, r *http.Request) {
	if !s.cronReady(w) {
		return
	}
	var req CronAddRequest
	if !decode(w, r, &req) {
		return
	}
	j, err := CronJobOf(req)
	if err == nil {
		// Everything Prepare refuses is the caller's mistake: a bad
		// name, a schedule that does not parse or never fires.
		_, err = cron.Prepare(j, s.o.Now())
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	j, err = s.o.Cron.AddJob(r.Context(), j)
	switch {
	case errors.Is(err, store.ErrJobExists):
		writeError(w, http.StatusConflict, fmt.Sprintf("cron job %q exists (remove it first with warden cron rm %s)", req.Name, req.Name))
		return
	case err != nil:
		s.fail(w, r, "add cron job", err)
		return
	}
	s.log.InfoContext(r.Context(), "cron job added", "job", j.Name, "schedule", j.Schedule, "tz", j.TZ, "steps", len(j.Steps), "peer", mustPeer(r.Context()).String())
	writeJSON(w, http.StatusCreated, j)
}

func (s *Server) cronDelete(w http.ResponseWriter, r *http.Request) {
	if !s.cronReady(w) {
		return
	}
	name := r.PathValue("name")
	err := s.o.CronStore.DeleteCronJob(r.Context(), name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		noJob(w, name)
		return
	case errors.Is(err, store.ErrJobBusy):
		writeError(w, http.StatusConflict, fmt.Sprintf("cron job %q has a run in progress; remove it when the run has ended", name))
		return
	case err != nil:
		s.fail(w, r, "delete cron job", err)
		return
	}
	s.log.InfoContext(r.Context(), "cron job removed", "job", name, "peer", mustPeer(r.Context()).String())
	w.WriteHeader(http.StatusNoContent)
}

// cronRun starts a run now, as the operator: owner cron(job, run) with
// no parent. It answers 202 with the run as it started (running, or
// skipped when the job's overlap is skip and a run is in progress).
func (s *Server) cronRun(w http.ResponseWriter, r *http.Request) {
	if !s.cronReady(w) {
		return
	}
	name := r.PathValue("name")
	if cron.ValidName(name) != nil {
		noJob(w, name)
		return
	}
	// A scheduler that has not started yet (the host is starting) is
	// waited for briefly, not forever.
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	id, err := s.o.Cron.RunNow(ctx, name, owner.Owner{})
	switch {
	case errors.Is(err, store.ErrNotFound):
		noJob(w, name)
		return
	case errors.Is(err, cron.ErrNotRunning):
		writeError(w, http.StatusServiceUnavailable, "the cron scheduler has stopped (the host is shutting down)")
		return
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		writeError(w, http.StatusServiceUnavailable, "the cron scheduler has not started yet; try again")
		return
	case err != nil:
		s.fail(w, r, "run cron job", err)
		return
	}
	run, err := s.o.CronStore.GetCronRun(r.Context(), id)
	if err != nil {
		s.fail(w, r, "get cron run", err)
		return
	}
	s.log.InfoContext(r.Context(), "cron run started by operator", "job", name, "run", id, "status", run.Status, "peer", mustPeer(r.Context()).String())
	writeJSON(w, http.StatusAccepted, withSteps(run))
}

// cronGetRun returns a run with its steps; with ?wait=1 it first waits
// for the run to end (until the client hangs up).
func (s *Server) cronGetRun(w http.ResponseWriter, r *http.Request) {
	if !s.cronReady(w) {
		return
	}
	id := r.PathValue("id")
	wait := false
	if v := r.URL.Query().Get("wait"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("wait: want 1 or 0, got %q", v))
			return
		}
		wait = b
	}
	var (
		run store.CronRun
		err error
	)
	if wait {
		run, err = s.o.Cron.Wait(r.Context(), id)
	} else {
		run, err = s.o.CronStore.GetCronRun(r.Context(), id)
	}
	if s.failed(w, r, "get cron run", err, fmt.Sprintf("no cron run %q", id)) {
		return
	}
	writeJSON(w, http.StatusOK, withSteps(run))
}

// cronHistory lists a job's runs with their steps, newest first
// (?limit=N, default all).
func (s *Server) cronHistory(w http.ResponseWriter, r *http.Request, name string) {
	if !s.cronReady(w) {
		return
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit: want a count, got %q", v))
			return
		}
		limit = n
	}
	if _, err := s.o.CronStore.GetCronJob(r.Context(), name); errors.Is(err, store.ErrNotFound) {
		noJob(w, name)
		return
	} else if err != nil {
		s.fail(w, r, "get cron job", err)
		return
	}
	runs, err := s.o.CronStore.ListCronRuns(r.Context(), name, limit)
	if err != nil {
		s.fail(w, r, "list cron runs", err)
		return
	}
	if runs == nil {
		runs = []store.CronRun{}
	}
	for i := range runs {
		runs[i] = withSteps(runs[i])
	}
	writeJSON(w, http.StatusOK, runs)
}

// withSteps makes a run without steps say so with [] rather than null.
func withSteps(r store.CronRun) store.CronRun {
	if r.Steps == nil {
		r.Steps = []store.CronStep{}
	}
	return r
}
