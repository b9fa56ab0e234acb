package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const credentialCols = `id, kind, hash, name, scopes, parent, issued_by, remote, created, expires, used, revoked`

func scanCredential(sc scanner) (store.Credential, error) {
	var (
		c                store.Credential
		kind, scopes     string
		created, expires string
		used, revoked    *string
	)
	if err := sc.Scan(&c.ID, &kind, &c.Hash, &c.Name, &scopes, &c.Parent, &c.By, &c.Remote, &created, &expires, &used, &revoked); err != nil {
		return store.Credential{}, err
	}
	c.Kind = store.CredentialKind(kind)
	var errs [5]error
	errs[0] = codec.ParseJSON("scopes", scopes, &c.Scopes)
	c.Created, errs[1] = codec.ParseTime(created)
	c.Expires, errs[2] = codec.ParseTime(expires)
	c.Used, errs[3] = codec.ParseOptTime(used)
	c.Revoked, errs[4] = codec.ParseOptTime(revoked)
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
	sc, err := codec.JSON("scopes", scopes)
	if err != nil {
		return err
	}
	created, err := codec.Time(c.Created)
	if err != nil {
		return err
	}
	expires, err := codec.Time(c.Expires)
	if err != nil {
		return err
	}
	used, err := codec.OptTime(c.Used)
	if err != nil {
		return err
	}
	revoked, err := codec.OptTime(c.Revoked)
	if err != nil {
		return err
	}
	if err := db.refuse(); err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `INSERT INTO credentials (`+credentialCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.ID, string(c.Kind), c.Hash, c.Name, sc, c.Parent, c.By, c.Remote, created, expires, used, revoked)
	return db.noteConn(err)
}

// CredentialByHash returns the credential of kind with hash, or
// store.ErrNotFound.
func (db *DB) CredentialByHash(ctx context.Context, kind store.CredentialKind, hash string) (store.Credential, error) {
	c, err := scanCredential(db.pool.QueryRow(ctx, `SELECT `+credentialCols+` FROM credentials WHERE hash = $1 AND kind = $2`, hash, string(kind)))
	if noRows(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Credential{}, fmt.Errorf("get %s credential: %w", kind, db.noteConn(err))
	}
	return c, nil
}

// UseCredential marks a live credential used, once: one UPDATE … WHERE
// used IS NULL, so of two hosts using one login link, one wins.
func (db *DB) UseCredential(ctx context.Context, kind store.CredentialKind, hash string, at time.Time) (store.Credential, error) {
	ts, err := codec.Time(at)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	if err := db.refuse(); err != nil {
		return store.Credential{}, err
	}
	c, err := scanCredential(db.pool.QueryRow(ctx, `UPDATE credentials SET used = $1
		WHERE hash = $2 AND kind = $3 AND used IS NULL AND revoked IS NULL AND expires > $1
		RETURNING `+credentialCols, ts, hash, string(kind)))
	if err == nil {
		return c, nil
	}
	if !noRows(err) {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, db.noteConn(err))
	}
	cur, err := db.CredentialByHash(ctx, kind, hash)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	return cur, fmt.Errorf("use %s credential %s: %w", kind, cur.ID, store.ErrCredentialSpent)
}

// ListCredentials lists the credentials of kind, oldest first.
func (db *DB) ListCredentials(ctx context.Context, kind store.CredentialKind) ([]store.Credential, error) {
	out, err := queryRows(ctx, db.pool, scanCredential, `SELECT `+credentialCols+` FROM credentials WHERE kind = $1 ORDER BY created, ord`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("list %s credentials: %w", kind, db.noteConn(err))
	}
	return out, nil
}

// RevokeCredential revokes credential id of kind; a second revocation
// keeps the first time.
func (db *DB) RevokeCredential(ctx context.Context, kind store.CredentialKind, id string, at time.Time) error {
	ts, err := codec.Time(at)
	if err == nil {
		err = db.exec1(ctx, `UPDATE credentials SET revoked = coalesce(revoked, $1) WHERE id = $2 AND kind = $3`, ts, id, string(kind))
	}
	if err != nil {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, err)
	}
	return nil
}

// RevokeCredentials revokes every unrevoked credential of kind.
func (db *DB) RevokeCredentials(ctx context.Context, kind store.CredentialKind, at time.Time) (int, error) {
	ts, err := codec.Time(at)
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	n, err := db.execN(ctx, `UPDATE credentials SET revoked = $1 WHERE kind = $2 AND revoked IS NULL`, ts, string(kind))
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	return n, nil
}

// PurgeCredentials deletes the credentials that expired before before.
func (db *DB) PurgeCredentials(ctx context.Context, before time.Time) (int, error) {
	ts, err := codec.Time(before)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	n, err := db.execN(ctx, `DELETE FROM credentials WHERE expires < $1`, ts)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	return n, nil
}

// execN runs a write and returns how many rows it touched.
func (db *DB) execN(ctx context.Context, sql string, args ...any) (int, error) {
	if err := db.refuse(); err != nil {
		return 0, err
	}
	tag, err := db.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, db.noteConn(err)
	}
	return int(tag.RowsAffected()), nil
}
