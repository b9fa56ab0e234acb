package store

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Cron sentinel errors callers branch on.
var (
	// ErrJobExists: a cron job with that name is already stored.
	ErrJobExists = errors.New("cron job exists")
	// ErrJobBusy: the cron job has a run in progress.
	ErrJobBusy = errors.New("cron job has a run in progress")
	// ErrRunEnded: the cron run is no longer running, so it takes no
	// more steps and cannot end again.
	ErrRunEnded = errors.New("cron run already ended")
)

// CronKind is what a cron job runs.
type CronKind string

// Cron job kinds.
const (
	// CronScript runs its steps, shell command lines, in order.
	CronScript CronKind = "script"
	// CronPrompt runs an agent with its one step as the prompt, as the
	// run's cron owner.
	CronPrompt CronKind = "prompt"
)

// Overlap says what happens when a job is due while a run of it is
// still running.
type Overlap string

// Overlap policies.
const (
	// OverlapSkip records the new run as skipped (the default).
	OverlapSkip Overlap = "skip"
	// OverlapAllow starts it beside the running one.
	OverlapAllow Overlap = "allow"
)

// CatchUp says what happens to slots missed while no scheduler ran
// (the host was down or asleep).
type CatchUp string

// Catch-up policies. Either way a job never fires once per missed slot.
const (
	// CatchUpOnce runs the job once for all its missed slots (the
	// default).
	CatchUpOnce CatchUp = "once"
	// CatchUpSkip records one skipped run and waits for the next slot.
	CatchUpSkip CatchUp = "skip"
)

// RunStatus is where a cron run is. Running is the only status that
// changes, and only once.
type RunStatus string

// Cron run statuses.
const (
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
	RunSkipped   RunStatus = "skipped"
)

// Trigger is what started a cron run.
type Trigger string

// Cron run triggers.
const (
	TriggerSchedule Trigger = "schedule" // a slot came due
	TriggerCatchUp  Trigger = "catchup"  // slots were missed while no scheduler ran
	TriggerManual   Trigger = "manual"   // an operator ran it now (warden cron run)
	TriggerParent   Trigger = "parent"   // another owner (a kanban worker) asked for it
)

// CronOutputCap bounds a step's stored output, truncation marker
// included.
const CronOutputCap = 64 << 10

// CronJob is a scheduled job.
type CronJob struct {
	// Name identifies the job; it is the job id of the runs' cron owner.
	Name string `json:"name"`
	// Schedule is the cron spec as the user wrote it, and TZ the IANA
	// time zone it is read in ("" means UTC, unless the spec has a
	// CRON_TZ= prefix). internal/cron parses both; the store keeps them
	// as text.
	Schedule string   `json:"schedule"`
	TZ       string   `json:"tz,omitempty"`
	Kind     CronKind `json:"kind"`
	// Steps are the shell command lines a script job runs, in order; a
	// prompt job's one step is its prompt.
	Steps   []string `json:"steps"`
	Overlap Overlap  `json:"overlap"`
	CatchUp CatchUp  `json:"catch_up"`
	Enabled bool     `json:"enabled"`
	// NextRun is when the job is next due, and NextSlot that slot's
	// de-duplication key (CronSlot.Key). A zero NextRun means the
	// schedule never fires again.
	NextRun  time.Time `json:"next_run_at,omitzero"`
	NextSlot string    `json:"next_slot,omitempty"`
	Created  time.Time `json:"created_at"`
}

// CronRun is one run of a job.
type CronRun struct {
	ID      string  `json:"run_id"`
	Job     string  `json:"job"`
	Trigger Trigger `json:"trigger"`
	// Slot is the de-duplication key of the schedule slot the run is
	// for and Scheduled when that slot was due; both are empty for
	// manual and parent runs.
	Slot      string    `json:"slot,omitempty"`
	Scheduled time.Time `json:"scheduled_at,omitzero"`
	Started   time.Time `json:"started_at"`
	Finished  time.Time `json:"finished_at,omitzero"`
	Status    RunStatus `json:"status"`
	// Parent is the notation of the owner that asked for the run
	// (trigger parent), e.g. "kanban:T1,run=R1".
	Parent string `json:"parent,omitempty"`
	// Host is the id of the host process that started the run.
	Host string `json:"host"`
	// Error says why a run failed or was skipped.
	Error string     `json:"error,omitempty"`
	Steps []CronStep `json:"steps"`
}

// CronStep is one step of a run as it ended.
type CronStep struct {
	// N is the step's index in the run, from 0; the store assigns it.
	N       int    `json:"n"`
	Command string `json:"command"`
	// Verdict and Rule are the gate's decision.
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"`
	// ExitCode is the command's exit status, -1 when it did not run or
	// did not exit.
	ExitCode int `json:"exit_code"`
	// Output is stdout and stderr interleaved, capped at CronOutputCap
	// with a truncation marker; for a denied step it is the gate's
	// reason.
	Output   string    `json:"output"`
	Started  time.Time `json:"started_at"`
	Finished time.Time `json:"finished_at"`
}

// CronSlot is one firing of a job's schedule.
type CronSlot struct {
	// At is when the slot is due; zero means the schedule never fires
	// again.
	At time.Time
	// Key names the slot for de-duplication: a job fires at most once
	// per key. internal/cron uses the scheduled local wall-clock time,
	// so a slot that a DST fall-back repeats is one slot.
	Key string
}

// CronPlan tells ClaimDue how a job's schedule advances; the store
// keeps no schedule logic of its own.
type CronPlan struct {
	// Next returns j's first slot strictly after after.
	Next func(j CronJob, after time.Time) (CronSlot, error)
	// Late is how far behind its slot a claim may be and still be on
	// time. A slot further behind was missed (no scheduler ran) and the
	// job's CatchUp policy applies.
	Late time.Duration
}

// CronStart asks for a run outside the schedule.
type CronStart struct {
	Job string
	// Trigger is TriggerManual or TriggerParent.
	Trigger Trigger
	// Parent is the parent owner's notation for TriggerParent.
	Parent string
	Host   string
	// At is the start time; zero means now.
	At time.Time
}

// CronStore keeps cron jobs and their run history.
type CronStore interface {
	// AddCronJob stores a new job; a taken name gives ErrJobExists.
	AddCronJob(ctx context.Context, j CronJob) error
	// GetCronJob returns the job name, or ErrNotFound.
	GetCronJob(ctx context.Context, name string) (CronJob, error)
	// ListCronJobs lists every job by name.
	ListCronJobs(ctx context.Context) ([]CronJob, error)
	// DeleteCronJob removes a job and its history. It gives ErrNotFound
	// for an unknown job and ErrJobBusy while a run of it is running.
	DeleteCronJob(ctx context.Context, name string) error
	// NextCronDue is the earliest NextRun of the enabled jobs, zero if
	// none will fire.
	NextCronDue(ctx context.Context) (time.Time, error)
	// ClaimDue claims, in one immediate transaction, every enabled job
	// whose NextRun is at or before now: it advances the job's NextRun
	// to plan.Next's first slot after both the claimed slot and now (so
	// a job never fires once per missed slot) and records one run per
	// claimed slot, started by host. A slot more than plan.Late behind
	// now was missed: it runs once (trigger catchup) or is recorded
	// skipped, by the job's CatchUp. A job whose overlap is skip and
	// that has a running run gets a skipped run. A slot key the job
	// already has a run for is claimed without a run (the DST fall-back
	// repeat). A job whose plan fails stops (NextRun zero) with a
	// failed run saying why. ClaimDue returns the runs the caller must
	// execute, all running, oldest slot first. A store shared by several
	// hosts may claim in batches: while a job is still due after the
	// call (NextCronDue), the caller calls again.
	ClaimDue(ctx context.Context, now time.Time, host string, plan CronPlan) ([]CronRun, error)
	// StartCronRun starts a manual or parent run of s.Job at once, or
	// records it skipped when the job's overlap is skip and a run is
	// running. ErrNotFound for an unknown job.
	StartCronRun(ctx context.Context, s CronStart) (CronRun, error)
	// AppendCronStep adds the run's next step (its N is assigned) and
	// returns it; ErrRunEnded unless the run is running. The output is
	// capped with CapOutput.
	AppendCronStep(ctx context.Context, runID string, st CronStep) (CronStep, error)
	// FinishCronRun ends a running run as succeeded or failed (with
	// the reason in msg) and returns it; a zero at means now. A run that
	// already ended gives ErrRunEnded with the row as it ended.
	FinishCronRun(ctx context.Context, runID string, status RunStatus, at time.Time, msg string) (CronRun, error)
	// AbandonCronRuns fails every running run started by a host other
	// than keep (a restarted host's predecessors) with reason, and
	// returns how many; a zero at means now.
	AbandonCronRuns(ctx context.Context, keep string, at time.Time, reason string) (int, error)
	// GetCronRun returns a run with its steps, or ErrNotFound.
	GetCronRun(ctx context.Context, id string) (CronRun, error)
	// ListCronRuns lists the runs of job ("" means every job) with
	// their steps, newest first, at most limit (0 means no limit).
	ListCronRuns(ctx context.Context, job string, limit int) ([]CronRun, error)
}

// Validate checks what every store requires of a new job.
func (j CronJob) Validate() error {
	switch {
	case j.Name == "":
		return errors.New("empty name")
	case j.Schedule == "":
		return errors.New("empty schedule")
	case j.Kind != CronScript && j.Kind != CronPrompt:
		return fmt.Errorf("kind %q: want %q or %q", j.Kind, CronScript, CronPrompt)
	case j.Kind == CronScript && len(j.Steps) == 0:
		return errors.New("a script job needs at least one step")
	case j.Kind == CronPrompt && len(j.Steps) != 1:
		return errors.New("a prompt job has exactly one step, its prompt")
	case j.Overlap != OverlapSkip && j.Overlap != OverlapAllow:
		return fmt.Errorf("overlap %q: want %q or %q", j.Overlap, OverlapSkip, OverlapAllow)
	case j.CatchUp != CatchUpOnce && j.CatchUp != CatchUpSkip:
		return fmt.Errorf("catch-up %q: want %q or %q", j.CatchUp, CatchUpOnce, CatchUpSkip)
	case j.Created.IsZero():
		return errors.New("no creation time")
	}
	for i, s := range j.Steps {
		if s == "" {
			return fmt.Errorf("step %d is empty", i+1)
		}
	}
	return nil
}

// TruncationMarker is what replaces omitted output.
func TruncationMarker(omitted int64) string {
	return fmt.Sprintf("\n[warden: %d bytes of output omitted]\n", omitted)
}

// CapOutput returns s if it fits CronOutputCap, and otherwise its head
// and tail around a TruncationMarker, cut on UTF-8 boundaries, in at
// most CronOutputCap bytes. truncated reports whether it cut.
func CapOutput(s string) (out string, truncated bool) {
	if len(s) <= CronOutputCap {
		return s, false
	}
	// Room for the marker with the widest count there can be.
	room := CronOutputCap - len(TruncationMarker(int64(len(s))))
	head := runeStart(s, room/2)
	tail := runeEnd(s, len(s)-(room-head))
	return s[:head] + TruncationMarker(int64(tail-head)) + s[tail:], true
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeEnd moves i forward to the start of the next rune.
func runeEnd(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
