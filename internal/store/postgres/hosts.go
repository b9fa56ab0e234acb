package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const hostCols = `id, started, renewed, expires, expires > now(), addr`

func scanHost(sc scanner) (store.HostLease, error) {
	var h store.HostLease
	err := sc.Scan(&h.ID, &h.Started, &h.Renewed, &h.Expires, &h.Live, &h.Addr)
	h.Started, h.Renewed, h.Expires = h.Started.UTC(), h.Renewed.UTC(), h.Expires.UTC()
	return h, err
}

// JoinHost registers h.ID with a lease of ttl from the server's clock.
func (db *DB) JoinHost(ctx context.Context, h store.HostLease, ttl time.Duration) (store.HostLease, error) {
	if h.ID == "" {
		return store.HostLease{}, errors.New("join hosts: empty id")
	}
	if err := db.refuse(); err != nil {
		return store.HostLease{}, err
	}
	out, err := scanHost(db.pool.QueryRow(ctx, `INSERT INTO hosts (id, expires, addr)
		VALUES ($1, now() + $2::bigint * interval '1 microsecond', $3) RETURNING `+hostCols, h.ID, ttl.Microseconds(), h.Addr))
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return store.HostLease{}, fmt.Errorf("join hosts as %s: the id is taken", h.ID)
		}
		return store.HostLease{}, fmt.Errorf("join hosts as %s: %w", h.ID, db.noteConn(err))
	}
	return out, nil
}

// RenewHost extends id's lease; a reaped lease is store.ErrLeaseLost.
func (db *DB) RenewHost(ctx context.Context, id string, ttl time.Duration) (store.HostLease, error) {
	h, err := scanHost(db.pool.QueryRow(ctx, `UPDATE hosts SET renewed = now(), expires = now() + $2::bigint * interval '1 microsecond'
		WHERE id = $1 RETURNING `+hostCols, id, ttl.Microseconds()))
	if noRows(err) {
		return store.HostLease{}, fmt.Errorf("renew the lease of host %s: %w (it expired and was reaped)", id, store.ErrLeaseLost)
	}
	if err != nil {
		return store.HostLease{}, fmt.Errorf("renew the lease of host %s: %w", id, db.noteConn(err))
	}
	return h, nil
}

// LeaveHost drops id's lease.
func (db *DB) LeaveHost(ctx context.Context, id string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM hosts WHERE id = $1`, id); err != nil {
		return fmt.Errorf("leave hosts: %w", db.noteConn(err))
	}
	return nil
}

// ListHosts lists every lease by id.
func (db *DB) ListHosts(ctx context.Context) ([]store.HostLease, error) {
	out, err := queryRows(ctx, db.pool, scanHost, `SELECT `+hostCols+` FROM hosts ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", db.noteConn(err))
	}
	return out, nil
}

// ReapHosts deletes the expired leases (DELETE … RETURNING: each goes
// to one reaper) and fails the running cron runs of every host without
// a live lease, in one transaction; a run that process records still
// name is left running until a fence forgets them.
func (db *DB) ReapHosts(ctx context.Context, at time.Time, reason string) ([]store.HostLease, int, error) {
	end, err := codec.Time(now(at))
	if err != nil {
		return nil, 0, fmt.Errorf("reap hosts: %w", err)
	}
	var (
		reaped []store.HostLease
		runs   int
	)
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		reaped, err = queryRows(ctx, tx, scanHost, `DELETE FROM hosts WHERE expires <= now() RETURNING `+hostCols)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE cron_runs SET status = 'failed', finished = $1, error = $2
			WHERE status = 'running' AND host NOT IN (SELECT id FROM hosts WHERE expires > now())
			AND NOT EXISTS (SELECT 1 FROM processes WHERE run = 'cron:' || cron_runs.id)`, end, reason)
		runs = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reap hosts: %w", err)
	}
	return reaped, runs, nil
}

// now is the store's default for a zero time.
func now(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}
