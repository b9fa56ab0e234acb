package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

const grantCols = `id, scope, session, grain, pattern, granted_by, surface, created, expires`

func scanGrant(sc scanner) (grant.Grant, error) {
	var (
		g                  grant.Grant
		scope, grain, made string
		expires            sql.NullString
	)
	if err := sc.Scan(&g.ID, &scope, &g.Session, &grain, &g.Pattern, &g.By, &g.Surface, &made, &expires); err != nil {
		return grant.Grant{}, err
	}
	g.Scope, g.Grain = grant.Scope(scope), grant.Grain(grain)
	var err1, err2 error
	g.Created, err1 = decTime(made)
	g.Expires, err2 = decOptTime(expires)
	if err := errors.Join(err1, err2); err != nil {
		return grant.Grant{}, fmt.Errorf("grant %s: %w", g.ID, err)
	}
	return g, nil
}

// AddGrant stores g. It needs an id that is not taken, a known scope
// and grain, a pattern, and a session for a session grant.
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
	created, err := encTime(g.Created)
	if err != nil {
		return err
	}
	expires, err := encOptTime(g.Expires)
	if err != nil {
		return err
	}
	_, err = db.w.ExecContext(ctx, `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, string(g.Scope), g.Session, string(g.Grain), g.Pattern, g.By, g.Surface, created, expires)
	return err
}

// RevokeGrant deletes the grant id, or returns store.ErrNotFound.
func (db *DB) RevokeGrant(ctx context.Context, id string) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM grants WHERE id = ?`, id)
	if err == nil {
		err = oneRow(res)
	}
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	return nil
}

// ListGrants lists every grant, oldest first.
func (db *DB) ListGrants(ctx context.Context) ([]grant.Grant, error) {
	out, err := queryRows(ctx, db.r, scanGrant, `SELECT `+grantCols+` FROM grants ORDER BY created, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return out, nil
}

// Grants returns the permanent grants and those of session, oldest
// first, expired ones included. Session "" gets the permanent ones
// only.
func (db *DB) Grants(ctx context.Context, session string) ([]grant.Grant, error) {
	out, err := queryRows(ctx, db.r, scanGrant, `SELECT `+grantCols+` FROM grants
		WHERE scope = 'permanent' OR (scope = 'session' AND session = ? AND session <> '')
		ORDER BY created, rowid`, session)
	if err != nil {
		return nil, fmt.Errorf("grants of session %q: %w", session, err)
	}
	return out, nil
}
