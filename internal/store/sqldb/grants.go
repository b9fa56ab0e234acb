package sqldb

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const grantCols = `id, scope, session, grain, pattern, granted_by, surface, created, expires`

func scanGrant(sc codec.Scanner) (grant.Grant, error) {
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

// AddGrant stores g. It needs an id that is not taken, a known scope
// and grain, a pattern, and a session for a session grant.
func (b *Base) AddGrant(ctx context.Context, g grant.Grant) error {
	if err := b.addGrant(ctx, g); err != nil {
		return fmt.Errorf("add grant %s: %w", g.ID, err)
	}
	return nil
}

func (b *Base) addGrant(ctx context.Context, g grant.Grant) error {
	if err := store.CheckGrant(g); err != nil {
		return err
	}
	created, err1 := codec.Time(g.Created)
	expires, err2 := codec.OptTime(g.Expires)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	_, err := b.exec(ctx, `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, string(g.Scope), g.Session, string(g.Grain), g.Pattern, g.By, g.Surface, created, expires)
	return err
}

// RevokeGrant deletes the grant id, or returns store.ErrNotFound.
func (b *Base) RevokeGrant(ctx context.Context, id string) error {
	if err := b.exec1(ctx, `DELETE FROM grants WHERE id = ?`, id); err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	return nil
}

// ListGrants lists every grant, oldest first.
func (b *Base) ListGrants(ctx context.Context) ([]grant.Grant, error) {
	out, err := QueryRows(ctx, b.r, scanGrant, `SELECT `+grantCols+` FROM grants ORDER BY created, `+b.d.Ord)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", b.note(err))
	}
	return out, nil
}

// Grants returns the permanent grants and those of session, oldest
// first, expired ones included. Session "" gets the permanent ones
// only. It reads the table on every call, so a grant recorded on one
// host covers the next action on any.
func (b *Base) Grants(ctx context.Context, session string) ([]grant.Grant, error) {
	out, err := QueryRows(ctx, b.r, scanGrant, `SELECT `+grantCols+` FROM grants
		WHERE scope = 'permanent' OR (scope = 'session' AND session = ? AND session <> '')
		ORDER BY created, `+b.d.Ord, session)
	if err != nil {
		return nil, fmt.Errorf("grants of session %q: %w", session, b.note(err))
	}
	return out, nil
}
