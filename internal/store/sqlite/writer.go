package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
)

// Group commit. Every write that carries audit records (a decision, a
// request created, ended or withdrawn, with the records of those
// transitions) is an op handed to one goroutine, the committer. It takes
// whatever ops are waiting (up to MaxBatch), runs them in one immediate
// transaction, each inside its own savepoint (an op that fails rolls
// back alone), and commits once: one fsync for the whole batch. Only
// then is each op's caller answered, so every record is durable before
// its caller goes on to run anything. The chain stays one serial chain:
// the committer reads the head inside the transaction, which holds the
// database's write lock, and appends the batch's records in order.
//
// Durability. A batch holding a durable op — a decision, or a human's
// answer (approved or denied) — commits with synchronous=FULL on the
// writer connection. A batch of system transitions only (a question
// asked, expired or withdrawn) commits with synchronous=NORMAL on the
// second writer connection: it survives a crash of the process, and a
// power cut can lose it only together with its request row (one
// transaction), leaving a request that never was, or one still pending
// that the next start withdraws, with its record; nothing runs on such
// a transition. The WAL is append-only, so the next FULL commit's fsync
// makes every earlier commit durable too. Anchors only ever receive
// durable heads, so a power cut cannot leave an anchor ahead of the log.

// defaultMaxBatch bounds the ops of one transaction.
const defaultMaxBatch = 256

// recoverEvery is how often a store whose disk filled up tries to
// recover (checkpoint its WAL and write again).
const recoverEvery = 500 * time.Millisecond

// Errors a store that stopped accepting work wraps, with
// store.ErrUnavailable.
var (
	// ErrDiskFull: a write failed for want of space (or an I/O error).
	// The store retries by itself and recovers when space returns.
	ErrDiskFull = errors.New("disk full or failing")
	// ErrFileGone: the database file was deleted or replaced while the
	// store had it open; writes would go to a file nobody will see
	// again. Permanent: restart the host once the file is restored.
	ErrFileGone = errors.New("database file deleted or replaced")
	// ErrLogShrank: the audit log lost records that this store wrote
	// (someone removed them behind its back). Permanent.
	ErrLogShrank = errors.New("audit log lost records behind the store's back")
)

// op is one write of the committer.
type op struct {
	// fn runs inside the batch's transaction, in its own savepoint; an
	// error rolls back what it wrote and is its caller's answer.
	fn   func(ctx context.Context, tx *wtx, c *chain) error
	done chan error
	// durable: the batch must commit with synchronous=FULL.
	durable bool
}

// chain is the audit log's head while a batch runs.
type chain struct {
	first string // hash of seq 1; "" while the log is empty
	seq   int64
	hash  string
	recs  []store.Decision // appended in this batch, in order
	// sandbox labels records that carry none (SetSandboxLabel).
	sandbox string
}

// add chains d after the head and inserts it. d's fields must be
// normalised (UTC time, nil owner when absent): see normDecision.
func (c *chain) add(ctx context.Context, tx *wtx, d store.Decision) (store.Decision, error) {
	at, err := encTime(d.Time)
	if err != nil {
		return store.Decision{}, err
	}
	owner, err := encRaw("owner", d.Owner)
	if err != nil {
		return store.Decision{}, err
	}
	classes, err := encJSON("classes", d.Classes)
	if err != nil {
		return store.Decision{}, err
	}
	if d.Sandbox == "" {
		d.Sandbox = c.sandbox
	}
	d.Seq, d.Prev = c.seq+1, c.hash
	d.Hash = store.ChainHash(d)
	if _, err := tx.ExecContext(ctx, sqlAuditInsert,
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

// normDecision is d as it is hashed and will read back: UTC time (the
// JSON of a time carries its zone), a zero time meaning now, and no
// owner as nil (an empty non-nil json.RawMessage does not marshal).
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
	err   error // wraps store.ErrUnavailable
	since time.Time
	// transient faults (a full disk) clear themselves on recovery.
	transient bool
}

// submit hands fn to the committer and waits for its batch to commit.
// ctx only bounds the wait for a place in the queue: once taken, the op
// runs and its outcome is awaited, so a caller never mistakes a
// committed write for a failed one.
func (db *DB) submit(ctx context.Context, durable bool, fn func(ctx context.Context, tx *wtx, c *chain) error) error {
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

// commitLoop is the committer's goroutine.
func (db *DB) commitLoop() {
	defer close(db.loopDone)
	batch := make([]*op, 0, db.o.MaxBatch)
	for {
		batch = batch[:0]
		// A store waiting for space tries to recover even when idle, so
		// that its status is true without a write to prompt it. No timer
		// runs otherwise.
		var retry <-chan time.Time
		if f := db.fault.Load(); f != nil && f.transient {
			retry = time.After(recoverEvery)
		}
		select {
		case o := <-db.ops:
			batch = append(batch, o)
		case <-retry:
			db.recover(context.Background())
			continue
		case <-db.stopped:
			// Answer whatever is still queued, then stop.
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
		err := db.commit(batch)
		for _, o := range batch {
			if err != nil {
				o.done <- err
			}
			// Otherwise commit has answered each op with its own result.
		}
	}
}

// commit runs batch in one transaction. It returns the error every op
// gets when the batch as a whole failed; otherwise it has answered each
// op itself, after the commit and after the records were handed on.
func (db *DB) commit(batch []*op) error {
	if f := db.fault.Load(); f != nil && (!f.transient || !db.recover(context.Background())) {
		return f.err
	}
	if err := db.checkFile(); err != nil {
		return err
	}
	ctx := context.Background()
	pool, durable := db.q, false
	for _, o := range batch {
		durable = durable || o.durable
	}
	if durable {
		pool = db.w
	}
	stmts, err := db.prepare(ctx, pool)
	if err != nil {
		return db.classify(err)
	}
	sqlTx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return db.classify(err)
	}
	defer sqlTx.Rollback()
	tx := &wtx{Tx: sqlTx, stmts: stmts}
	c, err := db.readHead(ctx, tx)
	if err != nil {
		return err
	}
	results := make([]error, len(batch))
	if len(batch) == 1 {
		// The transaction is the op's own: no savepoint needed.
		if err := batch[0].fn(ctx, tx, c); err != nil {
			if f := db.classify(err); errors.Is(f, store.ErrUnavailable) {
				return f
			}
			batch[0].done <- err
			return nil // rolled back by the deferred Rollback
		}
	}
	for i, o := range batch {
		if len(batch) == 1 {
			break
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT op`); err != nil {
			return db.classify(err)
		}
		saved, n := *c, len(c.recs)
		if err := o.fn(ctx, tx, c); err != nil {
			if f := db.classify(err); errors.Is(f, store.ErrUnavailable) {
				return f // the disk, not the op: the whole batch fails
			}
			results[i] = err
			*c = saved
			c.recs = c.recs[:n]
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO op`); err != nil {
				return db.classify(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `RELEASE op`); err != nil {
			return db.classify(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return db.classify(err)
	}
	db.setHead(c)
	if len(c.recs) > 0 && db.o.Committed != nil {
		db.o.Committed(c.recs)
	}
	if durable && c.seq > 0 {
		db.keeper.Post(anchor.Head{Store: c.first, Seq: c.seq, Hash: c.hash, Time: time.Now().UTC()})
	}
	for i, o := range batch {
		o.done <- results[i]
	}
	return nil
}

// readHead reads the log's head inside tx and checks it against the
// head this store last committed: another process may have appended
// since (fine), but the log must not have lost what this store wrote.
func (db *DB) readHead(ctx context.Context, tx *wtx) (*chain, error) {
	c := &chain{}
	if l := db.sandbox.Load(); l != nil {
		c.sandbox = *l
	}
	err := tx.QueryRowContext(ctx, sqlHead).Scan(&c.seq, &c.hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, db.classify(fmt.Errorf("read chain head: %w", err))
	}
	hashAt := func(seq int64) (string, error) {
		var h string
		err := tx.QueryRowContext(ctx, sqlHashAt, seq).Scan(&h)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return "", db.classify(fmt.Errorf("read chain head: %w", err))
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
	// The usual case costs one query: the head is the one this store
	// committed last (or a later one another process appended after it).
	c.first = mine.first
	var loss *store.LossError
	switch {
	case c.seq == mine.seq && c.hash == mine.hash:
		return c, nil
	case c.seq < mine.seq:
		loss = &store.LossError{Anchor: "this process's last commit", AnchorSeq: mine.seq, Last: c.seq, Missing: mine.seq - c.seq}
		if c.seq == 0 {
			loss.Missing, loss.Replaced = 0, true
		}
	default:
		h, err := hashAt(mine.seq)
		if err != nil {
			return nil, err
		}
		if h == mine.hash {
			return c, nil // another process appended; the chain links on from ours
		}
		loss = &store.LossError{Anchor: "this process's last commit", AnchorSeq: mine.seq, Last: c.seq, Changed: true}
	}
	return nil, db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrLogShrank, loss), false)
}

// The committer's own statements; with the request statements
// (requests.go) they are prepared once per writer connection.
const (
	sqlAuditInsert = `INSERT INTO audit (` + auditCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlHead   = `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`
	sqlHashAt = `SELECT hash FROM audit WHERE seq = ?`
)

var preparedSQL = []string{sqlAuditInsert, sqlHead, sqlHashAt, sqlRequestInsert, sqlRequestEnd, sqlRequestGet, sqlRequestsWithdraw, sqlSessionInsert,
	`SAVEPOINT op`, `ROLLBACK TO op`, `RELEASE op`}

// wtx is the committer's transaction: the statements it runs again and
// again are prepared once per connection rather than parsed each time
// (SQLite's parser was a third of a small batch's CPU).
type wtx struct {
	*sql.Tx
	stmts map[string]*sql.Stmt
}

// ExecContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

// QueryRowContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// QueryContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, q, args...)
}

// prepare prepares preparedSQL on pool once (committer goroutine only).
func (db *DB) prepare(ctx context.Context, pool *sql.DB) (map[string]*sql.Stmt, error) {
	if m, ok := db.prepared[pool]; ok {
		return m, nil
	}
	m := make(map[string]*sql.Stmt, len(preparedSQL))
	for _, q := range preparedSQL {
		st, err := pool.PrepareContext(ctx, q)
		if err != nil {
			for _, s := range m {
				s.Close()
			}
			return nil, fmt.Errorf("prepare the committer's statements: %w", err)
		}
		m[q] = st
	}
	db.prepared[pool] = m
	return m, nil
}

// head is the part of a chain the store remembers between batches.
type head struct {
	first, hash string
	seq         int64
}

func (db *DB) setHead(c *chain) {
	db.headMu.Lock()
	db.head = head{first: c.first, hash: c.hash, seq: c.seq}
	db.headMu.Unlock()
}

func (db *DB) lastHead() head {
	db.headMu.Lock()
	defer db.headMu.Unlock()
	return db.head
}

// CheckFile checks that the database file is still the one the store
// opened; if not, the store refuses all work from now on (Fault) and the
// error says why.
func (db *DB) CheckFile() error { return db.checkFile() }

// checkFile fails the store for good if its file is no longer the one
// it opened: deleted (writes would land in an unlinked inode and vanish
// with the last descriptor) or replaced by another file.
func (db *DB) checkFile() error {
	fi, err := os.Stat(db.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return db.fail(fmt.Errorf("%w: %w: %s was deleted while the host had it open; restore it and restart the host", store.ErrUnavailable, ErrFileGone, db.path), false)
	case err != nil:
		return fmt.Errorf("check database file: %w", err)
	case !os.SameFile(fi, db.ident):
		return db.fail(fmt.Errorf("%w: %w: %s was replaced by another file while the host had it open; restart the host", store.ErrUnavailable, ErrFileGone, db.path), false)
	}
	return nil
}

// classify turns a write error into a fault when it is the disk's (full,
// or failing I/O): the store then refuses work until it recovers. Other
// errors are returned as they are.
func (db *DB) classify(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
			return db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrDiskFull, err), true)
		}
	}
	return err
}

// fail records f as the store's fault (the first permanent one stays)
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
				db.o.Logger.Error("store stopped accepting work", "path", db.path, "err", err)
			}
			return err
		}
	}
}

// recover tries to bring a store whose disk filled up back: checkpoint
// the WAL into the database and truncate it (giving its space back),
// which succeeds only once there is room. At most every recoverEvery.
func (db *DB) recover(ctx context.Context) bool {
	db.recoverMu.Lock()
	defer db.recoverMu.Unlock()
	f := db.fault.Load()
	if f == nil {
		return true
	}
	if !f.transient || time.Since(db.lastRecover) < recoverEvery {
		return false
	}
	db.lastRecover = time.Now()
	var busy, logPages, done int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil || busy != 0 {
		return false
	}
	// A write proves there is room again: it rewrites a row as it is,
	// which still puts a page in the WAL.
	if err := db.probe(ctx); err != nil {
		return false
	}
	if db.fault.CompareAndSwap(f, nil) {
		db.o.Logger.Info("store accepts work again", "path", db.path, "down_for", time.Since(f.since).Round(time.Millisecond).String())
	}
	return true
}

func (db *DB) probe(ctx context.Context) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET name = name WHERE version = (SELECT max(version) FROM schema_version)`); err != nil {
		return err
	}
	return tx.Commit()
}

// Fault returns since when and why the store stopped accepting work, or
// a nil error while it accepts work. A full disk clears by itself when space
// returns; a deleted or replaced file, or a log that lost records, needs
// the operator and a restart.
func (db *DB) Fault() (time.Time, error) {
	f := db.fault.Load()
	if f == nil {
		return time.Time{}, nil
	}
	return f.since, f.err
}

// Head returns the audit log's head as this store last committed or
// found it: what the anchors hold once they caught up.
func (db *DB) Head() anchor.Head {
	h := db.lastHead()
	return anchor.Head{Store: h.first, Seq: h.seq, Hash: h.hash}
}

// FlushAnchors waits until the anchors hold the head of every commit
// made so far (or failed to take it).
func (db *DB) FlushAnchors(ctx context.Context) error { return db.keeper.Flush(ctx) }
