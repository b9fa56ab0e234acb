package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/workerapi"
)

// DefaultRemoteTokenTTL is how long an issued task waits for its remote
// worker's hello.
const DefaultRemoteTokenTTL = 10 * time.Minute

// RemoteLog is the log of a run issued to a remote worker: its output is
// on the worker's machine (and in its steps' records).
const RemoteLog = "(remote worker)"

// ErrNoRemote: the host does not serve remote workers (kanban.remote is
// off).
var ErrNoRemote = errors.New("remote workers are off on this host (kanban.remote.enabled)")

// ErrNotIssuable: the task cannot be issued to a remote worker now.
var ErrNotIssuable = errors.New("task cannot be issued to a remote worker")

// Ticket is what an operator hands a remote worker: the task, its run,
// and the one-time token bound to both.
type Ticket struct {
	Task    string    `json:"task"`
	Run     string    `json:"run"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires_at"`
}

// Remote issues task to a remote worker: it claims the task (it must be
// ready) for a new run with no local worker, mints a
// one-time token bound to that task and run, valid for ttl (zero means
// DefaultRemoteTokenTTL), and lets the TLS listener admit it. An
// unclaimed run is failed when the token expires; a claimed one lives by
// its lease.
func (d *Dispatcher) Remote(ctx context.Context, task string, ttl time.Duration) (Ticket, error) {
	if d.o.RemoteListener == nil {
		return Ticket{}, ErrNoRemote
	}
	if ttl <= 0 {
		ttl = DefaultRemoteTokenTTL
	}
	if _, err := d.o.Board.GetTask(ctx, task); err != nil {
		return Ticket{}, err
	}
	if _, err := d.o.Board.Promote(ctx, d.o.Now()); err != nil {
		return Ticket{}, err
	}
	run := d.o.Boards.NewID()
	_, r, err := d.o.Board.ClaimTask(ctx, store.TaskClaim{Run: run, Log: RemoteLog, At: d.o.Now(), Task: task})
	if errors.Is(err, store.ErrNothingReady) {
		return Ticket{}, fmt.Errorf("%w: %s is not ready", ErrNotIssuable, task)
	}
	if err != nil {
		return Ticket{}, err
	}
	undo := func(why error) (Ticket, error) {
		if _, ferr := d.o.Board.RecordFailure(context.WithoutCancel(ctx), r.ID, "issue to a remote worker: "+why.Error(), d.o.FailureLimit, d.o.Now()); ferr != nil && !errors.Is(ferr, store.ErrTaskRunEnded) {
			why = errors.Join(why, ferr)
		}
		return Ticket{}, why
	}
	secret, err := workerapi.NewToken()
	if err != nil {
		return undo(err)
	}
	now := d.o.Now()
	tk := Ticket{Task: task, Run: r.ID, Token: secret, Expires: now.Add(ttl)}
	if err := d.o.Board.MintToken(ctx, store.WorkerToken{Hash: workerapi.TokenHash(secret), Task: task, Run: r.ID, Created: now, Expires: tk.Expires}); err != nil {
		return undo(err)
	}
	if err := d.srv.Issue(r.ID, tk.Expires); err != nil {
		return undo(err)
	}
	d.log.InfoContext(ctx, "issued a task to a remote worker", "task", task, "run", r.ID, "expires", tk.Expires)
	return tk, nil
}
