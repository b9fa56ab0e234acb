// Package sqldb is the SQL both stores run: the SQLite store
// (internal/store/sqlite) and the PostgreSQL store
// (internal/store/postgres) keep the same tables with the same columns
// and column encodings (internal/store/codec), so what reads and writes
// them is written once, here, against Q, a small interface both
// drivers are adapted to. Queries use ? placeholders; the PostgreSQL
// adapter numbers them ($1, $2, …).
//
// What really differs stays in the backends: how a connection is
// opened, the committer that batches audited writes, faults, and
// features one engine has and the other does not (row locks, advisory
// locks, NOTIFY), which reach this package through Dialect and Base.
package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

// Q is a pool, a connection or a transaction of either driver.
type Q interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a query; the caller closes the rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query expected to return at most one row; no row
	// is sql.ErrNoRows from Scan, whatever the driver.
	QueryRow(ctx context.Context, query string, args ...any) codec.Scanner
}

// Rows is a result set of either driver.
type Rows interface {
	codec.Rows
	Close()
}

// Dialect is what the two engines spell differently.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// ForUpdate ends a SELECT that locks its rows for the transaction
	// (" FOR UPDATE"); empty where a write transaction holds the whole
	// database already (SQLite's BEGIN IMMEDIATE).
	ForUpdate string
	// Lock takes a transaction-scoped lock named key (PostgreSQL's
	// advisory locks); nil where writes are serial anyway.
	Lock func(ctx context.Context, tx Q, key string) error
	// Ord is the column that orders a table's rows by insertion, to
	// list rows created at one instant in the order they were added:
	// SQLite's rowid, PostgreSQL's identity column ord.
	Ord string
}

// Base is a backend's handles. The stores shared by both backends are
// its methods, promoted into each backend's DB by embedding.
type Base struct {
	d Dialect
	// r serves reads; w single-statement writes outside the committer.
	r, w Q
	// tx runs fn in a transaction that commits when fn returns nil.
	tx TxFunc
	// note turns a driver error into the store's (PostgreSQL notes an
	// unreachable server as a fault); nil keeps errors as they are.
	note func(error) error
	// c runs the audited writes (writer.go).
	c *Committer
	// refuse says why the store takes no writes now (SetRefuse); nil
	// while it takes them.
	refuse func() error
}

// TxKind says what a transaction does.
type TxKind int

const (
	// TxWrite writes and commits durably.
	TxWrite TxKind = iota
	// TxRelaxed writes what is not a decision (an agent's
	// conversation): its commit need not wait for the disk.
	TxRelaxed
	// TxRead only reads, from one snapshot.
	TxRead
)

// TxFunc runs fn in a transaction of the kind asked, which commits when
// fn returns nil and rolls back otherwise.
type TxFunc func(ctx context.Context, kind TxKind, fn func(tx Q) error) error

// NewBase returns a backend's handles: r for reads, w for writes of one
// statement, tx for transactions, note for errors (nil: unchanged), c
// for the writes that carry audit records (nil for a store that only
// reads its log).
func NewBase(d Dialect, r, w Q, tx TxFunc, note func(error) error, c *Committer) Base {
	if note == nil {
		note = func(err error) error { return err }
	}
	return Base{d: d, r: r, w: w, tx: tx, note: note, c: c}
}

// inTx runs fn in a transaction and notes its error.
func (b *Base) inTx(ctx context.Context, kind TxKind, fn func(tx Q) error) error {
	return b.note(b.tx(ctx, kind, fn))
}

// QueryRows runs query on q and scans every row with scan; no rows is
// an empty slice, not nil, so that a list marshals as [] rather than
// null.
func QueryRows[T any](ctx context.Context, q Q, scan func(codec.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return codec.Collect(rows, scan)
}

// notFound maps "no rows" to store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// ScanString scans a one-column row of text.
func ScanString(sc codec.Scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}
