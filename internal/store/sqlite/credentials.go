package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.Credentials = (*DB)(nil)

const credentialCols = `id, kind, hash, name, scopes, parent, issued_by, remote, created, expires, used, revoked`

func scanCredential(sc scanner) (store.Credential, error) {
	var (
		c                store.Credential
		kind, scopes     string
		created, expires string
		used, revoked    sql.NullString
	)
	if err := sc.Scan(&c.ID, &kind, &c.Hash, &c.Name, &scopes, &c.Parent, &c.By, &c.Remote, &created, &expires, &used, &revoked); err != nil {
		return store.Credential{}, err
	}
	c.Kind = store.CredentialKind(kind)
	var errs [5]error
	errs[0] = decJSON("scopes", scopes, &c.Scopes)
	c.Created, errs[1] = decTime(created)
	c.Expires, errs[2] = decTime(expires)
	c.Used, errs[3] = decOptTime(used)
	c.Revoked, errs[4] = decOptTime(revoked)
	if err := errors.Join(errs[:]...); err != nil {
		return store.Credential{}, fmt.Errorf("credential %s: %w", c.ID, err)
	}
	return c, nil
}

// AddCredential stores c (its hash, never a secret).
func (db *DB) AddCredential(ctx context.Context, c store.Credential) error {
	if err := db.addCredential(ctx, c); err != nil {
		return fmt.Errorf("add credential %s: %w", c.ID, err)
	}
	return nil
}

func (db *DB) addCredential(ctx context.Context, c store.Credential) error {
	scopes, err := store.CheckCredential(c)
	if err != nil {
		return err
	}
	sc, err := encJSON("scopes", scopes)
	if err != nil {
		return err
	}
	created, err := encTime(c.Created)
	if err != nil {
		return err
	}
	expires, err := encTime(c.Expires)
	if err != nil {
		return err
	}
	used, err := encOptTime(c.Used)
	if err != nil {
		return err
	}
	revoked, err := encOptTime(c.Revoked)
	if err != nil {
		return err
	}
	_, err = db.w.ExecContext(ctx, `INSERT INTO credentials (`+credentialCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, string(c.Kind), c.Hash, c.Name, sc, c.Parent, c.By, c.Remote, created, expires, used, revoked)
	return err
}

// CredentialByHash returns the credential of kind with hash, or
// store.ErrNotFound.
func (db *DB) CredentialByHash(ctx context.Context, kind store.CredentialKind, hash string) (store.Credential, error) {
	c, err := scanCredential(db.r.QueryRowContext(ctx, `SELECT `+credentialCols+` FROM credentials WHERE hash = ? AND kind = ?`, hash, string(kind)))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Credential{}, fmt.Errorf("get %s credential: %w", kind, err)
	}
	return c, nil
}

// UseCredential marks a live credential used, once (see
// store.Credentials).
func (db *DB) UseCredential(ctx context.Context, kind store.CredentialKind, hash string, at time.Time) (store.Credential, error) {
	now, err := encTime(at)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	c, err := scanCredential(db.w.QueryRowContext(ctx, `UPDATE credentials SET used = ?
		WHERE hash = ? AND kind = ? AND used IS NULL AND revoked IS NULL AND expires > ?
		RETURNING `+credentialCols, now, hash, string(kind), now))
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	cur, err := db.CredentialByHash(ctx, kind, hash)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	return cur, fmt.Errorf("use %s credential %s: %w", kind, cur.ID, store.ErrCredentialSpent)
}

// ListCredentials lists the credentials of kind, oldest first.
func (db *DB) ListCredentials(ctx context.Context, kind store.CredentialKind) ([]store.Credential, error) {
	out, err := queryRows(ctx, db.r, scanCredential, `SELECT `+credentialCols+` FROM credentials WHERE kind = ? ORDER BY created, rowid`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("list %s credentials: %w", kind, err)
	}
	return out, nil
}

// RevokeCredential revokes credential id of kind; a second revocation
// keeps the first time.
func (db *DB) RevokeCredential(ctx context.Context, kind store.CredentialKind, id string, at time.Time) error {
	now, err := encTime(at)
	if err != nil {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, err)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE credentials SET revoked = coalesce(revoked, ?) WHERE id = ? AND kind = ?`, now, id, string(kind))
	if err != nil {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, err)
	} else if n == 0 {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, store.ErrNotFound)
	}
	return nil
}

// RevokeCredentials revokes every unrevoked credential of kind.
func (db *DB) RevokeCredentials(ctx context.Context, kind store.CredentialKind, at time.Time) (int, error) {
	now, err := encTime(at)
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE credentials SET revoked = ? WHERE kind = ? AND revoked IS NULL`, now, string(kind))
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	return int(n), nil
}

// PurgeCredentials deletes the credentials that expired before before.
func (db *DB) PurgeCredentials(ctx context.Context, before time.Time) (int, error) {
	t, err := encTime(before)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	res, err := db.w.ExecContext(ctx, `DELETE FROM credentials WHERE expires < ?`, t)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	return int(n), nil
}
