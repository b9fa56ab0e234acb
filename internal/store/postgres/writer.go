package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

// Group commit, as in the SQLite store (its writer.go says why): every
// write that carries audit records is an op handed to one goroutine,
// which runs whatever ops are waiting in one transaction, each in its
// own savepoint, and commits once. The transaction first takes the
// audit advisory lock, so the head it reads is the chain's head across
// every host, and appends the batch's records after it.

// defaultMaxBatch bounds the ops of one transaction.
const defaultMaxBatch = 256

// Errors a store that stopped accepting work wraps, with
// store.ErrUnavailable.
var (
	// ErrUnreachable: the server cannot be reached or refuses work (a
	// connection failure, the server shutting down or out of space).
	// The store tries again with each write and each Ping.
	ErrUnreachable = errors.New("database unreachable")
	// ErrLogShrank: the audit log lost records that this store wrote
	// or had seen. Permanent.
	ErrLogShrank = errors.New("audit log lost records behind the store's back")
)

// op is one write of the committer.
type op struct {
	fn      func(ctx context.Context, tx pgx.Tx, c *chain) error
	done    chan error
	durable bool
}

// chain is the audit log's head while a batch runs, and the changes the
// batch announces.
type chain struct {
	first   string
	seq     int64
	hash    string
	recs    []store.Decision
	notices []string
	// sandbox labels records that carry none (SetSandboxLabel).
	sandbox string
}

const auditCols = `seq, time, session, owner, owner_text, kind, payload, payload_hash, classes,
	verdict, rule, request_id, answered_by, surface, reason, sandbox, prev, hash`

const sqlAuditInsert = `INSERT INTO audit (` + auditCols + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`

// add chains d after the head and inserts it. d must be normalised
// (normDecision).
func (c *chain) add(ctx context.Context, tx pgx.Tx, d store.Decision) (store.Decision, error) {
	at, err := codec.Time(d.Time)
	if err != nil {
		return store.Decision{}, err
	}
	owner, err := codec.Raw("owner", d.Owner)
	if err != nil {
		return store.Decision{}, err
	}
	classes, err := codec.JSON("classes", d.Classes)
	if err != nil {
		return store.Decision{}, err
	}
	if d.Sandbox == "" {
		d.Sandbox = c.sandbox
	}
	d.Seq, d.Prev = c.seq+1, c.hash
	d.Hash = store.ChainHash(d)
	if _, err := tx.Exec(ctx, sqlAuditInsert,
		d.Seq, at, d.Session, owner, d.OwnerText, string(d.Kind), d.Payload, d.PayloadHash, classes,
		d.Verdict, d.Rule, d.RequestID, d.By, d.Surface, d.Reason, d.Sandbox, d.Prev, d.Hash); err != nil {
		return store.Decision{}, err
	}
	if d.Seq == 1 {
		c.first = d.Hash
	}
	c.seq, c.hash = d.Seq, d.Hash
	c.recs = append(c.recs, d)
	return d, nil
}

// announce queues a change of request id for the batch's commit.
func (c *chain) announce(kind changeKind, origin, id string) {
	c.notices = append(c.notices, encodeChange(kind, origin, id))
}

// normDecision is d as it is hashed and will read back: UTC time, a
// zero time meaning now, and no owner as nil.
func normDecision(d store.Decision) store.Decision {
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	d.Time = d.Time.UTC()
	if len(d.Owner) == 0 {
		d.Owner = nil
	}
	return d
}

// fault is why the store stopped accepting work.
type fault struct {
	err       error
	since     time.Time
	transient bool
}

// submit hands fn to the committer and waits for its batch to commit.
// ctx only bounds the wait for a place in the queue.
func (db *DB) submit(ctx context.Context, durable bool, fn func(ctx context.Context, tx pgx.Tx, c *chain) error) error {
	o := &op{fn: fn, done: make(chan error, 1), durable: durable}
	select {
	case db.ops <- o:
	case <-db.stopped:
		return errors.New("store closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-o.done
}

func (db *DB) commitLoop() {
	defer close(db.loopDone)
	batch := make([]*op, 0, db.o.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case o := <-db.ops:
			batch = append(batch, o)
		case <-db.stopped:
			for {
				select {
				case o := <-db.ops:
					o.done <- errors.New("store closed")
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < db.o.MaxBatch {
			select {
			case o := <-db.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		if err := db.commit(batch); err != nil {
			for _, o := range batch {
				o.done <- err
			}
		}
	}
}

// commitTimeout bounds one batch against a server that stopped
// answering.
const commitTimeout = 30 * time.Second

// commit runs batch in one transaction. It returns the error every op
// gets when the batch as a whole failed; otherwise it has answered each
// op itself, after the commit.
func (db *DB) commit(batch []*op) error {
	if f := db.fault.Load(); f != nil && !f.transient {
		return f.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	durable := false
	for _, o := range batch {
		durable = durable || o.durable
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.noteConn(err)
	}
	defer tx.Rollback(context.Background())
	if !durable {
		// Asks, expiries and withdrawals: a server crash may lose the
		// last of them together with their rows (one transaction), and
		// nothing runs on any of them. Anchors never see these heads.
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return db.noteConn(err)
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "warden.audit."+db.schema); err != nil {
		return db.noteConn(err)
	}
	c, err := db.readHead(ctx, tx)
	if err != nil {
		return err
	}
	results := make([]error, len(batch))
	for i, o := range batch {
		if len(batch) == 1 {
			if err := o.fn(ctx, tx, c); err != nil {
				if f := db.noteConn(err); errors.Is(f, store.ErrUnavailable) {
					return f
				}
				o.done <- err
				return nil // rolled back
			}
			break
		}
		sp, err := tx.Begin(ctx) // a savepoint
		if err != nil {
			return db.noteConn(err)
		}
		saved, n, m := *c, len(c.recs), len(c.notices)
		if err := o.fn(ctx, sp, c); err != nil {
			if f := db.noteConn(err); errors.Is(f, store.ErrUnavailable) {
				return f
			}
			results[i] = err
			*c = saved
			c.recs, c.notices = c.recs[:n], c.notices[:m]
			if err := sp.Rollback(ctx); err != nil {
				return db.noteConn(err)
			}
			continue
		}
		if err := sp.Commit(ctx); err != nil {
			return db.noteConn(err)
		}
	}
	if len(c.notices) > 0 {
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n`, db.channel, c.notices); err != nil {
			return db.noteConn(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return db.noteConn(err)
	}
	db.clearTransient()
	if durable {
		// Only a durable head is remembered and anchored: the server may
		// lose the last asynchronous commits in a crash of its own,
		// which must not look like records removed behind its back.
		db.setHead(c)
		if c.seq > 0 {
			db.keeper.Post(anchor.Head{Store: c.first, Seq: c.seq, Hash: c.hash, Time: time.Now().UTC()})
		}
	}
	if len(c.recs) > 0 && db.o.Committed != nil {
		db.o.Committed(c.recs)
	}
	for i, o := range batch {
		o.done <- results[i]
	}
	return nil
}

// readHead reads the chain's head inside tx (which holds the audit
// lock) and checks it against the head this store last saw: other hosts
// append (fine), but the log must not have lost what this store saw.
func (db *DB) readHead(ctx context.Context, tx pgx.Tx) (*chain, error) {
	c := &chain{}
	if l := db.sandbox.Load(); l != nil {
		c.sandbox = *l
	}
	err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&c.seq, &c.hash)
	if err != nil && !noRows(err) {
		return nil, db.noteConn(fmt.Errorf("read chain head: %w", err))
	}
	hashAt := func(seq int64) (string, error) {
		var h string
		err := tx.QueryRow(ctx, `SELECT hash FROM audit WHERE seq = $1`, seq).Scan(&h)
		if err != nil && !noRows(err) {
			return "", db.noteConn(fmt.Errorf("read chain head: %w", err))
		}
		return h, nil
	}
	mine := db.lastHead()
	if mine.seq == 0 {
		if c.seq > 0 {
			if c.first, err = hashAt(1); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	c.first = mine.first
	var loss *store.LossError
	switch {
	case c.seq == mine.seq && c.hash == mine.hash:
		return c, nil
	case c.seq < mine.seq:
		loss = &store.LossError{Anchor: "this host's last view of the log", AnchorSeq: mine.seq, Last: c.seq, Missing: mine.seq - c.seq}
		if c.seq == 0 {
			loss.Missing, loss.Replaced = 0, true
		}
	default:
		h, err := hashAt(mine.seq)
		if err != nil {
			return nil, err
		}
		if h == mine.hash {
			return c, nil // other hosts appended after ours
		}
		loss = &store.LossError{Anchor: "this host's last view of the log", AnchorSeq: mine.seq, Last: c.seq, Changed: true}
	}
	return nil, db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrLogShrank, loss), false)
}

// head is the part of a chain the store remembers between batches.
type head struct {
	first, hash string
	seq         int64
}

func (db *DB) setHead(c *chain) {
	db.headMu.Lock()
	if c.seq >= db.head.seq {
		db.head = head{first: c.first, hash: c.hash, seq: c.seq}
	}
	db.headMu.Unlock()
}

func (db *DB) lastHead() head {
	db.headMu.Lock()
	defer db.headMu.Unlock()
	return db.head
}

// refuse returns the fault while the store has a permanent one.
func (db *DB) refuse() error {
	if f := db.fault.Load(); f != nil && !f.transient {
		return f.err
	}
	return nil
}

// noteConn turns an error that says the server cannot be reached (or
// cannot take work: shutting down, out of disk, out of connections)
// into a transient fault, which the next successful commit or Ping
// clears. Other errors are returned as they are.
func (db *DB) noteConn(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if !unreachable(err) {
		return err
	}
	return db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrUnreachable, err), true)
}

// unreachable reports errors of the connection or the server's
// resources rather than of the statement.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources (disk full, out of memory, too many connections)
			"57", // operator intervention (admin shutdown, crash shutdown)
			"58": // system error (I/O)
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.SafeToRetry(err)
}

// fail records err as the store's fault (the first permanent one stays)
// and returns it.
func (db *DB) fail(err error, transient bool) error {
	for {
		old := db.fault.Load()
		if old != nil && !old.transient {
			return old.err
		}
		since := time.Now()
		if old != nil {
			since = old.since
		}
		if db.fault.CompareAndSwap(old, &fault{err: err, since: since, transient: transient}) {
			if old == nil || !transient {
				db.o.Logger.Error("store stopped accepting work", "schema", db.schema, "err", err)
			}
			return err
		}
	}
}

// clearTransient clears a transient fault after a write or Ping went
// through.
func (db *DB) clearTransient() {
	f := db.fault.Load()
	if f != nil && f.transient && db.fault.CompareAndSwap(f, nil) {
		db.o.Logger.Info("store accepts work again", "schema", db.schema, "down_for", time.Since(f.since).Round(time.Millisecond).String())
	}
}
