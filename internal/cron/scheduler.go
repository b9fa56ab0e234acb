package cron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// Sentinel errors.
var (
	// ErrNotRunning: RunNow was called after Run returned.
	ErrNotRunning = errors.New("cron scheduler is not running")
	// ErrStopped is the cause the runs' contexts are cancelled with
	// when Run's context ends.
	ErrStopped = errors.New("cron scheduler stopped")
	// ErrName is wrapped by errors about a job's name.
	ErrName = errors.New("bad cron job name")
	// ErrTimeout is the cause a run's context is cancelled with when it
	// ran longer than Options.RunTimeout.
	ErrTimeout = errors.New("cron run timed out")
)

// Defaults of Options.
const (
	// DefaultWorkers is how many runs execute at once. A run writes
	// about three records (its step's decision, the step, its end)
	// through the store's one writer, which commits up to 256 waiting
	// writes together (group commit): 64 runs keep a batch full
	// without queueing more than one batch behind it, and bound the
	// processes a burst of due jobs starts at once.
	DefaultWorkers = 64
	// DefaultRunTimeout bounds one run, so a job that hangs frees its
	// worker (its commands are killed and the run recorded failed).
	DefaultRunTimeout = time.Hour
)

// Runner runs one shell step: it authorises the command as the owner
// bound to ctx, audits the decision and, if allowed, runs it
// (*runner.Runner).
type Runner interface {
	Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error)
}

var _ Runner = (*runner.Runner)(nil)

// Options configure a Scheduler.
type Options struct {
	Store  store.CronStore
	Runner Runner
	// Host is this host process's id, recorded on the runs it starts.
	// At start, runs left running by other host ids (a crashed
	// predecessor) are recorded failed.
	Host string
	// Now is the clock; nil means time.Now. The loop sleeps with real
	// timers, so it must move with the runtime's clock (time.Now, or
	// the fake one inside testing/synctest).
	Now    func() time.Time
	Logger *slog.Logger
	// Tick is the longest the loop sleeps between looks at the store,
	// so a job added behind its back (without Wake) is seen; zero
	// means a minute.
	Tick time.Duration
	// Late is how far behind its slot a run may start and still count
	// as on time; a slot further behind was missed and the job's
	// catch-up policy applies. Zero means a minute.
	Late time.Duration
	// Dir is the steps' working directory; "" means the host's.
	Dir string
	// Ended, if set, hears the session key of every run that ended
	// (the host drops the run's shell state).
	Ended func(ctx context.Context, session string)
	// Agent runs prompt jobs; nil fails them with "no model configured".
	Agent Agent
	// Shared: other live hosts run schedulers on the same store, so Run
	// must not end their runs at start; the hosts' leases decide which
	// runs are abandoned (internal/cluster).
	Shared bool
	// Workers bounds the runs that execute at once; the others wait
	// their turn in the order they were claimed. Zero means
	// DefaultWorkers.
	Workers int
	// RunTimeout bounds how long one run executes (time spent waiting
	// for a worker not counted): then its context is cancelled with
	// ErrTimeout, its command killed and the run recorded failed. Zero
	// means DefaultRunTimeout.
	RunTimeout time.Duration
}

// Agent runs a prompt job's agent as the owner in ctx, in dir, as
// conversation, and returns what happened for the run's record;
// *agent.Agent is one. A cron run has no kanban task, so board is nil.
type Agent interface {
	Prompt(ctx context.Context, conversation, dir, prompt string, board agent.Board) (agent.Transcript, error)
}

var _ Agent = (*agent.Agent)(nil)

// Scheduler fires due cron jobs and runs them, each with its own owner,
// at most Options.Workers at once. It is safe for concurrent use.
type Scheduler struct {
	o    Options
	log  *slog.Logger
	plan store.CronPlan
	wake chan struct{}
	// ready is closed once Run has ended the runs of earlier hosts.
	ready chan struct{}

	mu      sync.Mutex
	started bool
	// root is the runs' parent until Run returns, then nil.
	// It carries no value; Run cancels it when its ctx ends.
	root   context.Context
	cancel context.CancelCauseFunc
	active map[string]*active
	// queue holds the runs claimed and not yet executing, oldest first;
	// workers is how many worker goroutines run (none while idle).
	queue   []queued
	workers int
	wg      sync.WaitGroup
}

// queued is a run waiting for a worker.
type queued struct {
	run    store.CronRun
	parent owner.Owner
	ctx    context.Context
	a      *active
}

// active is a run executing in this process.
type active struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// New returns a Scheduler; Run starts it.
func New(o Options) (*Scheduler, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("new cron scheduler: no store")
	case o.Runner == nil:
		return nil, errors.New("new cron scheduler: no runner")
	case o.Host == "":
		return nil, errors.New("new cron scheduler: no host id")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Tick <= 0 {
		o.Tick = time.Minute
	}
	if o.Late <= 0 {
		o.Late = time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = DefaultRunTimeout
	}
	root, cancel := context.WithCancelCause(context.Background())
	return &Scheduler{
		o:      o,
		log:    o.Logger.With("component", "cron"),
		plan:   Plan(o.Late),
		wake:   make(chan struct{}, 1),
		ready:  make(chan struct{}),
		root:   root,
		cancel: cancel,
		active: map[string]*active{},
	}, nil
}

// Plan is how the store advances a job: its schedule parsed from the
// job's spec and zone, slots keyed by Schedule.Key, and late as
// store.CronPlan.Late.
func Plan(late time.Duration) store.CronPlan {
	return store.CronPlan{Late: late, Next: func(j store.CronJob, after time.Time) (store.CronSlot, error) {
		sc, err := Parse(j.Schedule, j.TZ)
		if err != nil {
			return store.CronSlot{}, err
		}
		at := sc.Next(after)
		if at.IsZero() {
			return store.CronSlot{}, nil
		}
		return store.CronSlot{At: at, Key: sc.Key(at)}, nil
	}}
}

// ValidName checks a job name: 1 to 64 letters, digits, '-', '_' or
// '.', starting with a letter or digit, so it reads the same in owner
// notation ("cron:NAME"), session keys and the CLI.
func ValidName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w %q: want 1 to 64 characters", ErrName, name)
	}
	for i, r := range name {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case i > 0 && (r == '-' || r == '_' || r == '.'):
		default:
			return fmt.Errorf("%w %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", ErrName, name)
		}
	}
	return nil
}

// Prepare checks a new job and fills in what the store needs: the kind
// (script), the overlap (skip) and catch-up (once) policies if unset,
// the creation time if zero, and the first slot after now. Enabled is
// left as given.
func Prepare(j store.CronJob, now time.Time) (store.CronJob, error) {
	if err := ValidName(j.Name); err != nil {
		return store.CronJob{}, err
	}
	sc, err := Parse(j.Schedule, j.TZ)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("cron job %s: %w", j.Name, err)
	}
	if j.Kind == "" {
		j.Kind = store.CronScript
	}
	if j.Overlap == "" {
		j.Overlap = store.OverlapSkip
	}
	if j.CatchUp == "" {
		j.CatchUp = store.CatchUpOnce
	}
	if j.Created.IsZero() {
		j.Created = now
	}
	j.NextRun, j.NextSlot = sc.Next(now), ""
	if !j.NextRun.IsZero() {
		j.NextSlot = sc.Key(j.NextRun)
	}
	if err := j.Validate(); err != nil {
		return store.CronJob{}, fmt.Errorf("cron job %s: %w", j.Name, err)
	}
	return j, nil
}

// AddJob prepares j (see Prepare), stores it and wakes the loop.
func (s *Scheduler) AddJob(ctx context.Context, j store.CronJob) (store.CronJob, error) {
	j, err := Prepare(j, s.o.Now())
	if err != nil {
		return store.CronJob{}, fmt.Errorf("add cron job: %w", err)
	}
	if err := s.o.Store.AddCronJob(ctx, j); err != nil {
		return store.CronJob{}, err
	}
	s.Wake()
	return j, nil
}

// Wake makes the loop look at the store now, e.g. after a job was
// added or changed by another path.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run runs the loop until ctx ends: it records runs left running by
// other host ids as failed, then claims due runs, queues them for the
// workers (at most Options.Workers execute at once) and sleeps until the next job is due (at most Tick, or
// until Wake). Slots missed while no scheduler ran are caught up on
// the first claim, once per job at most.
//
// When ctx ends, the runs in progress have their contexts cancelled
// with ErrStopped (their commands are killed) and are recorded failed
// with that cause; Run returns nil once they all have. Run may be
// called once.
func (s *Scheduler) Run(ctx context.Context) error {
	root, err := s.start(ctx)
	if err != nil {
		return err
	}
	defer s.stop(ctx)
	// On a shared store the cluster's reaper ends the runs of hosts
	// that are gone; other hosts' runs are alive.
	if !s.o.Shared {
		if n, err := s.o.Store.AbandonCronRuns(ctx, s.o.Host, s.o.Now(), "abandoned: the host running it stopped before it ended"); err != nil {
			s.log.WarnContext(ctx, "cron: could not end runs of earlier hosts", "err", err)
		} else if n > 0 {
			s.log.InfoContext(ctx, "cron: ended runs of earlier hosts", "runs", n)
		}
	}
	close(s.ready)
	retry := time.Second
	for {
		wait, err := s.cycle(ctx, root)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.ErrorContext(ctx, "cron: claim due runs", "err", err, "retry_in", retry)
			wait, retry = retry, min(2*retry, s.o.Tick)
		} else {
			retry = time.Second
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-s.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// start ties the runs' root context to the end of ctx (but to none of
// its values).
func (s *Scheduler) start(ctx context.Context) (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil, errors.New("cron scheduler: Run called twice")
	}
	s.started = true
	context.AfterFunc(ctx, func() { s.cancel(fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx))) })
	return s.root, nil
}

// stop cancels the runs in progress and waits for them to be recorded.
func (s *Scheduler) stop(ctx context.Context) {
	s.mu.Lock()
	s.root = nil
	s.cancel(fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx)))
	s.mu.Unlock()
	s.wg.Wait()
}

// cycle claims and starts the due runs and returns how long to sleep.
func (s *Scheduler) cycle(ctx context.Context, root context.Context) (time.Duration, error) {
	runs, err := s.o.Store.ClaimDue(ctx, s.o.Now(), s.o.Host, s.plan)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		s.launch(root, r, owner.Owner{})
	}
	next, err := s.o.Store.NextCronDue(ctx)
	if err != nil {
		return 0, err
	}
	wait := s.o.Tick
	if !next.IsZero() {
		// A job that fell due while this claim ran is claimed at once.
		wait = max(min(wait, next.Sub(s.o.Now())), time.Millisecond)
	}
	return wait, nil
}

// RunNow starts a run of the job name outside its schedule and returns
// its id (warden cron run). It waits (as long as ctx allows) for Run to
// have started, and returns ErrNotRunning once Run has returned. parent is the owner asking for it, such as
// a kanban worker; the zero Owner means an operator (a manual run).
// The run's owner is cron(name, run), a child of parent if there is
// one, so a deny anywhere along the lineage wins in the gate
// (invariant 5). Nothing of ctx reaches the run: ctx bounds only the
// store call. If the job's overlap policy is skip and a run of it is
// running, the new run is recorded skipped (Wait reports it).
func (s *Scheduler) RunNow(ctx context.Context, name string, parent owner.Owner) (string, error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return "", fmt.Errorf("run cron job %s: waiting for the scheduler to start: %w", name, context.Cause(ctx))
	}
	s.mu.Lock()
	root := s.root
	s.mu.Unlock()
	if root == nil {
		return "", fmt.Errorf("run cron job %s: %w", name, ErrNotRunning)
	}
	start := store.CronStart{Job: name, Trigger: store.TriggerManual, Host: s.o.Host, At: s.o.Now()}
	if parent.Valid() {
		start.Trigger, start.Parent = store.TriggerParent, parent.String()
	}
	// Refuse a lineage the owner package refuses before recording a run.
	if _, err := runOwner(name, "check", parent); err != nil {
		return "", fmt.Errorf("run cron job %s: %w", name, err)
	}
	r, err := s.o.Store.StartCronRun(ctx, start)
	if err != nil {
		return "", err
	}
	if r.Status == store.RunRunning {
		s.launch(root, r, parent)
	}
	return r.ID, nil
}

// Wait blocks until the run id has ended, or ctx ends, and returns it
// as it ended. It works for runs of any host sharing the store (those
// it polls).
func (s *Scheduler) Wait(ctx context.Context, id string) (store.CronRun, error) {
	s.mu.Lock()
	a := s.active[id]
	s.mu.Unlock()
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return store.CronRun{}, fmt.Errorf("wait for cron run %s: %w", id, context.Cause(ctx))
		}
	}
	for {
		r, err := s.o.Store.GetCronRun(ctx, id)
		if err != nil {
			return store.CronRun{}, fmt.Errorf("wait for cron run %s: %w", id, err)
		}
		if r.Status != store.RunRunning {
			return r, nil
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return store.CronRun{}, fmt.Errorf("wait for cron run %s: %w", id, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// launch queues r to execute under root, and starts a worker if fewer
// than Options.Workers run.
func (s *Scheduler) launch(root context.Context, r store.CronRun, parent owner.Owner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == nil {
		// Claimed as the loop stopped: record it, do not start it.
		s.finish(context.Background(), r, store.RunFailed, ErrStopped.Error()+" before the run started")
		return
	}
	ctx, cancel := context.WithCancelCause(root)
	a := &active{cancel: cancel, done: make(chan struct{})}
	s.active[r.ID] = a
	s.queue = append(s.queue, queued{run: r, parent: parent, ctx: ctx, a: a})
	if s.workers < s.o.Workers {
		s.workers++
		s.wg.Go(s.work)
	}
}

// work executes queued runs until none is left.
func (s *Scheduler) work() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.workers--
			s.queue = nil // let a burst's backing array go
			s.mu.Unlock()
			return
		}
		q := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		s.run(q)
	}
}

// run executes one queued run, bounded by Options.RunTimeout.
func (s *Scheduler) run(q queued) {
	defer func() {
		s.mu.Lock()
		delete(s.active, q.run.ID)
		s.mu.Unlock()
		q.a.cancel(nil)
		close(q.a.done)
	}()
	if q.ctx.Err() != nil {
		// Stopped while it waited for a worker.
		s.finish(q.ctx, q.run, store.RunFailed, context.Cause(q.ctx).Error()+" before the run started")
		return
	}
	ctx, cancel := context.WithTimeoutCause(q.ctx, s.o.RunTimeout, fmt.Errorf("%w after %s (cron.run_timeout)", ErrTimeout, s.o.RunTimeout))
	defer cancel()
	s.execute(ctx, q.run, q.parent)
}

// runOwner is the owner of run id of job: cron(job, id) with session
// "cron:JOB:ID", started on parent if parent is valid.
func runOwner(job, id string, parent owner.Owner) (owner.Owner, error) {
	o, err := owner.Cron(job, id)
	if err != nil {
		return owner.Owner{}, err
	}
	if o, err = o.WithSession("cron:" + job + ":" + id); err != nil {
		return owner.Owner{}, err
	}
	if parent.Valid() {
		if o, err = o.WithParent(parent); err != nil {
			return owner.Owner{}, err
		}
	}
	return o, nil
}

// execute runs r's steps as its owner and records how it ended. ctx
// descends from the scheduler's root and carries nothing but, from
// here on, the run's owner.
func (s *Scheduler) execute(ctx context.Context, r store.CronRun, parent owner.Owner) {
	status, reason := store.RunFailed, ""
	o, err := runOwner(r.Job, r.ID, parent)
	if err != nil {
		reason = "owner: " + err.Error()
	} else {
		ctx = owner.With(ctx, o)
		if job, err := s.o.Store.GetCronJob(ctx, r.Job); err != nil {
			reason = "load job: " + err.Error()
			if ctx.Err() != nil {
				reason = "cancelled before its first step: " + context.Cause(ctx).Error()
			}
		} else {
			status, reason = s.steps(ctx, r, job)
		}
	}
	s.finish(ctx, r, status, reason)
}

// finish records the end of r; a cancelled ctx does not stop it.
func (s *Scheduler) finish(ctx context.Context, r store.CronRun, status store.RunStatus, reason string) {
	ctx = context.WithoutCancel(ctx)
	if s.o.Ended != nil {
		s.o.Ended(ctx, "cron:"+r.Job+":"+r.ID)
	}
	if _, err := s.o.Store.FinishCronRun(ctx, r.ID, status, s.o.Now(), reason); err != nil {
		s.log.ErrorContext(ctx, "cron: record the end of a run", "job", r.Job, "run", r.ID, "err", err)
		return
	}
	lvl := slog.LevelInfo
	if status != store.RunSucceeded {
		lvl = slog.LevelWarn
	}
	s.log.Log(ctx, lvl, "cron: run ended", "job", r.Job, "run", r.ID, "trigger", r.Trigger, "status", status, "reason", reason)
}

// steps runs the job's steps in order and says how the run ends.
func (s *Scheduler) steps(ctx context.Context, r store.CronRun, job store.CronJob) (store.RunStatus, string) {
	if job.Kind == store.CronPrompt {
		return s.prompt(ctx, r, job)
	}
	for i, cmd := range job.Steps {
		if ctx.Err() != nil {
			return store.RunFailed, fmt.Sprintf("stopped before step %d: %v", i+1, context.Cause(ctx))
		}
		st, why := s.step(ctx, i, cmd)
		if _, err := s.o.Store.AppendCronStep(context.WithoutCancel(ctx), r.ID, st); err != nil {
			return store.RunFailed, fmt.Sprintf("record step %d: %v", i+1, err)
		}
		if why != "" {
			return store.RunFailed, why
		}
	}
	return store.RunSucceeded, ""
}

// prompt runs a prompt job's agent; its record is one step whose
// command is the prompt and whose output is the transcript. The run
// fails if the agent cannot run; refused tool calls are the agent's to
// handle (it was told not to retry them) and show in the transcript.
func (s *Scheduler) prompt(ctx context.Context, r store.CronRun, job store.CronJob) (store.RunStatus, string) {
	st := store.CronStep{Command: job.Steps[0], Started: s.o.Now(), Verdict: "agent", Rule: "agent"}
	var (
		res agent.Transcript
		err error
	)
	if s.o.Agent == nil {
		err = errors.New("no model configured: set llm.base_url and llm.model in the config file")
	} else {
		res, err = s.o.Agent.Prompt(ctx, "cron:"+r.Job+":"+r.ID, s.o.Dir, job.Steps[0], nil)
	}
	st.Finished, st.Output = s.o.Now(), res.Text
	if err != nil {
		st.ExitCode = -1
		st.Output += "\n[warden: " + err.Error() + "]\n"
	}
	var c capture
	c.Write([]byte(st.Output))
	st.Output = c.String()
	if _, aerr := s.o.Store.AppendCronStep(context.WithoutCancel(ctx), r.ID, st); aerr != nil {
		return store.RunFailed, fmt.Sprintf("record the agent's step: %v", aerr)
	}
	if err != nil {
		return store.RunFailed, "agent: " + err.Error()
	}
	return store.RunSucceeded, ""
}

// step authorises and runs one command; why is empty on success and
// otherwise says why the run fails.
func (s *Scheduler) step(ctx context.Context, i int, cmd string) (st store.CronStep, why string) {
	var out capture
	st = store.CronStep{Command: cmd, Started: s.o.Now()}
	res, code, err := s.o.Runner.Shell(ctx, cmd, s.o.Dir, &out, &out)
	st.Finished, st.ExitCode = s.o.Now(), code
	st.Verdict, st.Rule = string(res.Decision.Verdict), res.Decision.Rule
	switch {
	case !res.Allowed:
		st.Output, st.ExitCode = res.Message, -1
		if st.Output == "" && err != nil {
			st.Output = err.Error()
		}
		return st, fmt.Sprintf("step %d denied (%s): %s", i+1, res.Decision.Rule, st.Output)
	case err != nil:
		st.Output = out.String() + "\n[warden: " + err.Error() + "]\n"
		return st, fmt.Sprintf("step %d: %v", i+1, err)
	case code != 0:
		st.Output = out.String()
		return st, fmt.Sprintf("step %d exited with status %d", i+1, code)
	}
	st.Output = out.String()
	return st, ""
}
