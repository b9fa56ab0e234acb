package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.Hosts = (*DB)(nil)

// SQLite hosts share one machine, so lease times are this process's
// clock. (The host tells a dead neighbour on SQLite by its process id;
// the leases are there for the shared interface.)

const hostCols = `id, started, renewed, expires, addr`

func scanHost(sc scanner) (store.HostLease, error) {
	var (
		h                         store.HostLease
		started, renewed, expires string
	)
	if err := sc.Scan(&h.ID, &started, &renewed, &expires, &h.Addr); err != nil {
		return store.HostLease{}, err
	}
	var errs [3]error
	h.Started, errs[0] = decTime(started)
	h.Renewed, errs[1] = decTime(renewed)
	h.Expires, errs[2] = decTime(expires)
	h.Live = h.Expires.After(time.Now())
	return h, errors.Join(errs[:]...)
}

// JoinHost registers h.ID with a lease of ttl.
func (db *DB) JoinHost(ctx context.Context, h store.HostLease, ttl time.Duration) (store.HostLease, error) {
	if h.ID == "" {
		return store.HostLease{}, errors.New("join hosts: empty id")
	}
	now := time.Now()
	at, err1 := encTime(now)
	until, err2 := encTime(now.Add(ttl))
	if err := errors.Join(err1, err2); err != nil {
		return store.HostLease{}, fmt.Errorf("join hosts as %s: %w", h.ID, err)
	}
	res, err := db.w.ExecContext(ctx, `INSERT INTO hosts (`+hostCols+`) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, h.ID, at, at, until, h.Addr)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 0 {
			err = errors.New("the id is taken")
		}
	}
	if err != nil {
		return store.HostLease{}, fmt.Errorf("join hosts as %s: %w", h.ID, err)
	}
	return db.host(ctx, h.ID)
}

func (db *DB) host(ctx context.Context, id string) (store.HostLease, error) {
	return scanHost(db.w.QueryRowContext(ctx, `SELECT `+hostCols+` FROM hosts WHERE id = ?`, id))
}

// RenewHost extends id's lease; a reaped lease is store.ErrLeaseLost.
func (db *DB) RenewHost(ctx context.Context, id string, ttl time.Duration) (store.HostLease, error) {
	now := time.Now()
	at, err1 := encTime(now)
	until, err2 := encTime(now.Add(ttl))
	if err := errors.Join(err1, err2); err != nil {
		return store.HostLease{}, fmt.Errorf("renew the lease of host %s: %w", id, err)
	}
	h, err := scanHost(db.w.QueryRowContext(ctx, `UPDATE hosts SET renewed = ?, expires = ? WHERE id = ? RETURNING `+hostCols, at, until, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.HostLease{}, fmt.Errorf("renew the lease of host %s: %w (it expired and was reaped)", id, store.ErrLeaseLost)
	}
	if err != nil {
		return store.HostLease{}, fmt.Errorf("renew the lease of host %s: %w", id, err)
	}
	return h, nil
}

// LeaveHost drops id's lease.
func (db *DB) LeaveHost(ctx context.Context, id string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM hosts WHERE id = ?`, id); err != nil {
		return fmt.Errorf("leave hosts: %w", err)
	}
	return nil
}

// ListHosts lists every lease by id.
func (db *DB) ListHosts(ctx context.Context) ([]store.HostLease, error) {
	out, err := queryRows(ctx, db.r, scanHost, `SELECT `+hostCols+` FROM hosts ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	return out, nil
}

// ReapHosts deletes the expired leases and fails the running cron runs
// of hosts without a live lease, in one immediate transaction.
func (db *DB) ReapHosts(ctx context.Context, at time.Time, reason string) ([]store.HostLease, int, error) {
	reaped, n, err := db.reapHosts(ctx, at, reason)
	if err != nil {
		return nil, 0, fmt.Errorf("reap hosts: %w", err)
	}
	return reaped, n, nil
}

func (db *DB) reapHosts(ctx context.Context, at time.Time, reason string) ([]store.HostLease, int, error) {
	if at.IsZero() {
		at = time.Now()
	}
	end, err1 := encTime(at)
	nowText, err2 := encTime(time.Now())
	if err := errors.Join(err1, err2); err != nil {
		return nil, 0, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	reaped, err := queryRows(ctx, tx, scanHost, `DELETE FROM hosts WHERE expires <= ? RETURNING `+hostCols, nowText)
	if err != nil {
		return nil, 0, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE cron_runs SET status = 'failed', finished = ?, error = ?
		WHERE status = 'running' AND host NOT IN (SELECT id FROM hosts WHERE expires > ?)
		AND NOT EXISTS (SELECT 1 FROM processes WHERE run = 'cron:' || cron_runs.id)`, end, reason, nowText)
	if err != nil {
		return nil, 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, 0, err
	}
	return reaped, int(n), tx.Commit()
}
