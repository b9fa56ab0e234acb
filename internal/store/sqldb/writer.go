package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
)

// Group commit. Every write that carries audit records (a decision, a
// request created, ended or withdrawn, with the records of those
// transitions) is an op handed to one goroutine, the Committer. It takes
// whatever ops are waiting (up to MaxBatch), runs them in one
// transaction, each inside its own savepoint (an op that fails rolls
// back alone), and commits once: one flush to disk for the whole batch.
// Only then is each op's caller answered, so every record is committed
// before its caller goes on to run anything. The chain stays one serial
// chain: the committer reads the head inside the transaction, which
// holds the log's write lock (SQLite's immediate transaction,
// PostgreSQL's advisory lock), and appends the batch's records in
// order.
//
// A batch holding a durable op (a decision, or a human's answer) must
// survive a power cut; one of system transitions only (a question
// asked, expired or withdrawn) may commit without waiting for the disk.
// Anchors only ever receive durable heads. How each engine does this,
// and what counts as its fault rather than an op's, is its Engine.

// Errors of a store whose log does not hold what it should.
var (
	// ErrAuditLoss: the log falls short of an anchor kept outside it,
	// when the store opens (the error also holds the *store.LossError).
	ErrAuditLoss = errors.New("audit log lost records")
	// ErrLogShrank: the log lost records this store wrote or had seen
	// (someone removed them behind its back). Wrapped with
	// store.ErrUnavailable: the store refuses work for good.
	ErrLogShrank = errors.New("audit log lost records behind the store's back")
)

// defaultMaxBatch bounds the ops of one transaction.
const defaultMaxBatch = 256

// Op is one write of the committer. It runs inside the batch's
// transaction tx, in its own savepoint, and chains its audit records
// with c; an error rolls back what it wrote (and chained) and is its
// caller's answer.
type Op func(ctx context.Context, tx Q, c *Chain) error

// Engine is what a backend's committer does its own way.
type Engine interface {
	// Begin opens a batch's transaction, durable or not (see above), or
	// refuses the batch with the store's fault.
	Begin(ctx context.Context, durable bool) (Batch, error)
	// Classify returns err as the store's fault, wrapping
	// store.ErrUnavailable, when it is the engine's rather than the
	// op's (a full disk, a lost connection): then the whole batch
	// fails. Other errors it returns as they are.
	Classify(err error) error
}

// Recoverer is an Engine that clears a transient fault by itself (the
// SQLite store's full disk): while one lasts, the committer calls
// Recover every CommitOptions.RecoverEvery, so that the store's status
// comes true without a write to prompt it.
type Recoverer interface {
	Recover(ctx context.Context) bool
}

// Batch is one batch's transaction.
type Batch interface {
	Q
	// Commit commits the batch, announcing the request changes c holds
	// where the engine can (PostgreSQL's NOTIFY).
	Commit(ctx context.Context, c *Chain) error
	// Rollback ends the transaction if it did not commit.
	Rollback()
}

// CommitOptions configure a Committer.
type CommitOptions struct {
	// MaxBatch bounds how many ops share one transaction; 0 means 256,
	// 1 turns group commit off.
	MaxBatch int
	// Committed, if set, is called on the committer's goroutine after
	// each commit that wrote audit records, with those records, before
	// any op of the batch is answered.
	Committed func([]store.Decision)
	// Logger receives faults and recoveries; it names the store.
	Logger *slog.Logger
	// Timeout bounds one batch (a server that stopped answering); 0
	// means none.
	Timeout time.Duration
	// RecoverEvery is how often an idle Recoverer engine is asked to
	// recover from a transient fault.
	RecoverEvery time.Duration
	// DurableHeads remembers only the heads of durable commits: an
	// engine that may lose its last relaxed commits in a crash of its
	// own (a PostgreSQL server) must not take that for records removed
	// behind its back.
	DurableHeads bool
	// Mine names the head this store remembers, in the *store.LossError
	// of a log that no longer holds it.
	Mine string
}

// Committer runs the audited writes of a store (see above), and keeps
// what the store knows of its log between batches: the head, its fault,
// the sandbox label of the records it writes itself.
type Committer struct {
	e        Engine
	o        CommitOptions
	ops      chan *op
	stopped  chan struct{}
	loopDone chan struct{}
	keeper   *anchor.Keeper

	fault   atomic.Pointer[fault]
	headMu  sync.Mutex
	head    anchor.Head
	sandbox atomic.Pointer[string]
}

// op is one write waiting for the committer.
type op struct {
	fn      Op
	done    chan error
	durable bool
}

// fault is why the store stopped accepting work.
type fault struct {
	err   error // wraps store.ErrUnavailable
	since time.Time
	// transient faults clear themselves (Recover, ClearTransient).
	transient bool
}

// NewCommitter returns a committer over e; Start starts it.
func NewCommitter(e Engine, o CommitOptions) *Committer {
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Committer{e: e, o: o, ops: make(chan *op), stopped: make(chan struct{}), loopDone: make(chan struct{})}
}

// Start starts the committer on a log whose head is h (as the store
// found it when it opened), anchoring h and every durable head after it
// with k.
func (c *Committer) Start(h anchor.Head, k *anchor.Keeper) {
	c.head, c.keeper = anchor.Head{Store: h.Store, Seq: h.Seq, Hash: h.Hash}, k
	if h.Seq > 0 {
		// Anchor what is there now: the first start with anchors, or a
		// sink added since.
		k.Post(anchor.Head{Store: h.Store, Seq: h.Seq, Hash: h.Hash, Time: time.Now().UTC()})
	}
	go c.loop()
}

// Stop stops the committer; writes still queued are refused.
func (c *Committer) Stop() {
	close(c.stopped)
	<-c.loopDone
}

// Submit hands fn to the committer and waits for its batch to commit.
// ctx only bounds the wait for a place in the queue: once taken, the op
// runs and its outcome is awaited, so a caller never mistakes a
// committed write for a failed one. A durable op's batch commits
// durably.
func (c *Committer) Submit(ctx context.Context, durable bool, fn Op) error {
	o := &op{fn: fn, done: make(chan error, 1), durable: durable}
	select {
	case c.ops <- o:
	case <-c.stopped:
		return errors.New("store closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-o.done
}

// loop is the committer's goroutine.
func (c *Committer) loop() {
	defer close(c.loopDone)
	rec, _ := c.e.(Recoverer)
	batch := make([]*op, 0, c.o.MaxBatch)
	for {
		batch = batch[:0]
		// No timer runs unless a transient fault waits for recovery.
		var retry <-chan time.Time
		if f := c.fault.Load(); rec != nil && c.o.RecoverEvery > 0 && f != nil && f.transient {
			retry = time.After(c.o.RecoverEvery)
		}
		select {
		case o := <-c.ops:
			batch = append(batch, o)
		case <-retry:
			rec.Recover(context.Background())
			continue
		case <-c.stopped:
			// Answer whatever is still queued, then stop.
			for {
				select {
				case o := <-c.ops:
					o.done <- errors.New("store closed")
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < c.o.MaxBatch {
			select {
			case o := <-c.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		if err := c.commit(batch); err != nil {
			for _, o := range batch {
				o.done <- err
			}
		}
	}
}

// commit runs batch in one transaction. It returns the error every op
// gets when the batch as a whole failed; otherwise it has answered each
// op itself, after the commit and after the records were handed on.
func (c *Committer) commit(batch []*op) error {
	ctx := context.Background()
	if c.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.Timeout)
		defer cancel()
	}
	durable := false
	for _, o := range batch {
		durable = durable || o.durable
	}
	tx, err := c.e.Begin(ctx, durable)
	if err != nil {
		return c.e.Classify(err)
	}
	defer tx.Rollback()
	ch, err := c.readHead(ctx, tx)
	if err != nil {
		return err
	}
	results := make([]error, len(batch))
	if len(batch) == 1 {
		// The transaction is the op's own: no savepoint needed.
		if err := batch[0].fn(ctx, tx, ch); err != nil {
			if f := c.e.Classify(err); errors.Is(f, store.ErrUnavailable) {
				return f
			}
			batch[0].done <- err
			return nil // rolled back by the deferred Rollback
		}
	} else {
		for i, o := range batch {
			if results[i], err = c.savepoint(ctx, tx, ch, o.fn); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(ctx, ch); err != nil {
		return c.e.Classify(err)
	}
	c.ClearTransient()
	if durable || !c.o.DurableHeads {
		c.setHead(ch)
	}
	if durable && ch.seq > 0 {
		c.keeper.Post(anchor.Head{Store: ch.first, Seq: ch.seq, Hash: ch.hash, Time: time.Now().UTC()})
	}
	if len(ch.recs) > 0 && c.o.Committed != nil {
		c.o.Committed(ch.recs)
	}
	for i, o := range batch {
		o.done <- results[i]
	}
	return nil
}

// savepoint runs fn in a savepoint of tx: an error of fn's own rolls
// back what it wrote and chained, and is its result; an error of the
// engine's fails the batch.
func (c *Committer) savepoint(ctx context.Context, tx Q, ch *Chain, fn Op) (result, err error) {
	if _, err := tx.Exec(ctx, sqlSavepoint); err != nil {
		return nil, c.e.Classify(err)
	}
	saved := *ch
	if err := fn(ctx, tx, ch); err != nil {
		if f := c.e.Classify(err); errors.Is(f, store.ErrUnavailable) {
			return nil, f // the engine, not the op: the whole batch fails
		}
		result, *ch = err, saved
		if _, err := tx.Exec(ctx, sqlRollbackTo); err != nil {
			return nil, c.e.Classify(err)
		}
	}
	if _, err := tx.Exec(ctx, sqlRelease); err != nil {
		return nil, c.e.Classify(err)
	}
	return result, nil
}

// The committer's own statements.
const (
	sqlSavepoint  = `SAVEPOINT op`
	sqlRollbackTo = `ROLLBACK TO op`
	sqlRelease    = `RELEASE op`
	sqlHead       = `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`
	sqlHashAt     = `SELECT hash FROM audit WHERE seq = ?`
)

// CommitterSQL are the statements the committer runs again and again
// (in every batch, or in every op of one): an engine may prepare them.
func CommitterSQL() []string {
	return []string{sqlAuditInsert, sqlHead, sqlHashAt, sqlRequestInsert, sqlRequestEnd, sqlRequestGet, sqlRequestsWithdraw,
		sqlSavepoint, sqlRollbackTo, sqlRelease}
}

// readHead reads the log's head inside tx and checks it against the
// head this store remembers: another process or host may have appended
// since (fine), but the log must not have lost what this store wrote or
// saw.
func (c *Committer) readHead(ctx context.Context, tx Q) (*Chain, error) {
	ch := &Chain{}
	if l := c.sandbox.Load(); l != nil {
		ch.sandbox = *l
	}
	err := tx.QueryRow(ctx, sqlHead).Scan(&ch.seq, &ch.hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, c.e.Classify(fmt.Errorf("read chain head: %w", err))
	}
	hashAt := func(seq int64) (string, error) {
		var h string
		err := tx.QueryRow(ctx, sqlHashAt, seq).Scan(&h)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return "", c.e.Classify(fmt.Errorf("read chain head: %w", err))
		}
		return h, nil
	}
	mine := c.Head()
	if mine.Seq == 0 {
		if ch.seq > 0 {
			if ch.first, err = hashAt(1); err != nil {
				return nil, err
			}
		}
		return ch, nil
	}
	// The usual case costs one query: the head is the one this store
	// remembers (or a later one another writer appended after it).
	ch.first = mine.Store
	var loss *store.LossError
	switch {
	case ch.seq == mine.Seq && ch.hash == mine.Hash:
		return ch, nil
	case ch.seq < mine.Seq:
		loss = &store.LossError{Anchor: c.o.Mine, AnchorSeq: mine.Seq, Last: ch.seq, Missing: mine.Seq - ch.seq}
		if ch.seq == 0 {
			loss.Missing, loss.Replaced = 0, true
		}
	default:
		h, err := hashAt(mine.Seq)
		if err != nil {
			return nil, err
		}
		if h == mine.Hash {
			return ch, nil // others appended; the chain links on from ours
		}
		loss = &store.LossError{Anchor: c.o.Mine, AnchorSeq: mine.Seq, Last: ch.seq, Changed: true}
	}
	return nil, c.Fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrLogShrank, loss), false)
}

// setHead remembers ch's head; a head only moves forward.
func (c *Committer) setHead(ch *Chain) {
	c.headMu.Lock()
	if ch.seq >= c.head.Seq {
		c.head = anchor.Head{Store: ch.first, Seq: ch.seq, Hash: ch.hash}
	}
	c.headMu.Unlock()
}

// Head returns the audit log's head as this store last committed or
// found it (no time).
func (c *Committer) Head() anchor.Head {
	c.headMu.Lock()
	defer c.headMu.Unlock()
	return c.head
}

// Fail records err (wrapping store.ErrUnavailable) as the store's
// fault, unless a permanent one is there already, which stays, and
// returns the fault's error.
func (c *Committer) Fail(err error, transient bool) error {
	for {
		old := c.fault.Load()
		if old != nil && !old.transient {
			return old.err
		}
		since := time.Now()
		if old != nil {
			since = old.since
		}
		if c.fault.CompareAndSwap(old, &fault{err: err, since: since, transient: transient}) {
			if old == nil || !transient {
				c.o.Logger.Error("store stopped accepting work", "err", err)
			}
			return err
		}
	}
}

// Fault returns since when and why the store stopped accepting work, or
// a nil error while it accepts work.
func (c *Committer) Fault() (time.Time, error) {
	f := c.fault.Load()
	if f == nil {
		return time.Time{}, nil
	}
	return f.since, f.err
}

// Refuse returns the store's fault while it is a permanent one.
func (c *Committer) Refuse() error {
	if f := c.fault.Load(); f != nil && !f.transient {
		return f.err
	}
	return nil
}

// ClearTransient clears a transient fault once the engine works again.
func (c *Committer) ClearTransient() {
	f := c.fault.Load()
	if f != nil && f.transient && c.fault.CompareAndSwap(f, nil) {
		c.o.Logger.Info("store accepts work again", "down_for", time.Since(f.since).Round(time.Millisecond).String())
	}
}

// SetSandboxLabel is the sandbox label (sandbox.Label) of the records
// the store writes without one of their own: a question's ask and end,
// which the store writes with the request. The host sets it at start,
// so every record says which sandbox its action ran in (the label is
// part of each record's hash).
func (b *Base) SetSandboxLabel(label string) { b.c.sandbox.Store(&label) }

// Fault returns since when and why the store stopped accepting work, or
// a nil error while it accepts work. Transient faults (a full disk, an
// unreachable server) clear by themselves; a log that lost records, or
// a database file deleted or replaced, needs the operator and a
// restart.
func (b *Base) Fault() (time.Time, error) { return b.c.Fault() }

// Head returns the audit log's head as this store last committed or
// found it: what the anchors hold once they caught up.
func (b *Base) Head() anchor.Head { return b.c.Head() }

// FlushAnchors waits until the anchors hold the head of every commit
// made so far (or failed to take it).
func (b *Base) FlushAnchors(ctx context.Context) error { return b.c.keeper.Flush(ctx) }

// submit hands fn to the committer (Committer.Submit).
func (b *Base) submit(ctx context.Context, durable bool, fn Op) error {
	return b.c.Submit(ctx, durable, fn)
}
