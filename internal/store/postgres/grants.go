package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const grantCols = `id, scope, session, grain, pattern, granted_by, surface, created, expires`

func scanGrant(sc scanner) (grant.Grant, error) {
	var (
		g                  grant.Grant
		scope, grain, made string
		expires            *string
	)
	if err := sc.Scan(&g.ID, &scope, &g.Session, &grain, &g.Pattern, &g.By, &g.Surface, &made, &expires); err != nil {
		return grant.Grant{}, err
	}
	g.Scope, g.Grain = grant.Scope(scope), grant.Grain(grain)
	var err1, err2 error
	g.Created, err1 = codec.ParseTime(made)
	g.Expires, err2 = codec.ParseOptTime(expires)
	if err := errors.Join(err1, err2); err != nil {
		return grant.Grant{}, fmt.Errorf("grant %s: %w", g.ID, err)
	}
	return g, nil
}

// AddGrant stores g; see the SQLite store for what it requires.
func (db *DB) AddGrant(ctx context.Context, g grant.Grant) error {
	if err := db.addGrant(ctx, g); err != nil {
		return fmt.Errorf("add grant %s: %w", g.ID, err)
	}
	return nil
}

func (db *DB) addGrant(ctx context.Context, g grant.Grant) error {
	if err := store.CheckGrant(g); err != nil {
		return err
	}
	created, err := codec.Time(g.Created)
	if err != nil {
		return err
	}
	expires, err := codec.OptTime(g.Expires)
	if err != nil {
		return err
	}
	if err := db.refuse(); err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `INSERT INTO grants (`+grantCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		g.ID, string(g.Scope), g.Session, string(g.Grain), g.Pattern, g.By, g.Surface, created, expires)
	return db.noteConn(err)
}

// RevokeGrant deletes the grant id, or returns store.ErrNotFound.
func (db *DB) RevokeGrant(ctx context.Context, id string) error {
	if err := db.exec1(ctx, `DELETE FROM grants WHERE id = $1`, id); err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	return nil
}

// ListGrants lists every grant, oldest first.
func (db *DB) ListGrants(ctx context.Context) ([]grant.Grant, error) {
	out, err := queryRows(ctx, db.pool, scanGrant, `SELECT `+grantCols+` FROM grants ORDER BY created, ord`)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", db.noteConn(err))
	}
	return out, nil
}

// Grants returns the permanent grants and those of session, oldest
// first, expired ones included: read from the shared table on every
// call, so a grant recorded on one host covers the next action on any.
func (db *DB) Grants(ctx context.Context, session string) ([]grant.Grant, error) {
	out, err := queryRows(ctx, db.pool, scanGrant, `SELECT `+grantCols+` FROM grants
		WHERE scope = 'permanent' OR (scope = 'session' AND session = $1 AND session <> '')
		ORDER BY created, ord`, session)
	if err != nil {
		return nil, fmt.Errorf("grants of session %q: %w", session, db.noteConn(err))
	}
	return out, nil
}

// exec1 runs a write that must touch a row; none is store.ErrNotFound.
func (db *DB) exec1(ctx context.Context, sql string, args ...any) error {
	if err := db.refuse(); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, sql, args...)
	if err != nil {
		return db.noteConn(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// now is the store's default for a zero time.
func now(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}
