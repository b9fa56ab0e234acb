package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const credentialCols = `id, kind, hash, name, scopes, parent, issued_by, remote, created, expires, used, revoked`

func scanCredential(sc codec.Scanner) (store.Credential, error) {
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
func (b *Base) AddCredential(ctx context.Context, c store.Credential) error {
	if err := b.addCredential(ctx, c); err != nil {
		return fmt.Errorf("add credential %s: %w", c.ID, err)
	}
	return nil
}

func (b *Base) addCredential(ctx context.Context, c store.Credential) error {
	scopes, err := store.CheckCredential(c)
	if err != nil {
		return err
	}
	sc, err1 := codec.JSON("scopes", scopes)
	created, err2 := codec.Time(c.Created)
	expires, err3 := codec.Time(c.Expires)
	used, err4 := codec.OptTime(c.Used)
	revoked, err5 := codec.OptTime(c.Revoked)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return err
	}
	_, err = b.exec(ctx, `INSERT INTO credentials (`+credentialCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, string(c.Kind), c.Hash, c.Name, sc, c.Parent, c.By, c.Remote, created, expires, used, revoked)
	return err
}

// CredentialByHash returns the credential of kind with hash, or
// store.ErrNotFound.
func (b *Base) CredentialByHash(ctx context.Context, kind store.CredentialKind, hash string) (store.Credential, error) {
	c, err := scanCredential(b.r.QueryRow(ctx, `SELECT `+credentialCols+` FROM credentials WHERE hash = ? AND kind = ?`, hash, string(kind)))
	if err != nil {
		return store.Credential{}, fmt.Errorf("get %s credential: %w", kind, b.note(notFound(err)))
	}
	return c, nil
}

// UseCredential marks a live credential used, once: one UPDATE … WHERE
// used IS NULL, so of two hosts (or two requests) using one login link,
// one wins; the others get store.ErrCredentialSpent with the credential
// as it is.
func (b *Base) UseCredential(ctx context.Context, kind store.CredentialKind, hash string, at time.Time) (store.Credential, error) {
	now, err := codec.Time(at)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	if err := b.refused(); err != nil {
		return store.Credential{}, err
	}
	c, err := scanCredential(b.w.QueryRow(ctx, `UPDATE credentials SET used = ?
		WHERE hash = ? AND kind = ? AND used IS NULL AND revoked IS NULL AND expires > ?
		RETURNING `+credentialCols, now, hash, string(kind), now))
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, b.note(err))
	}
	cur, err := b.CredentialByHash(ctx, kind, hash)
	if err != nil {
		return store.Credential{}, fmt.Errorf("use %s credential: %w", kind, err)
	}
	return cur, fmt.Errorf("use %s credential %s: %w", kind, cur.ID, store.ErrCredentialSpent)
}

// ListCredentials lists the credentials of kind, oldest first.
func (b *Base) ListCredentials(ctx context.Context, kind store.CredentialKind) ([]store.Credential, error) {
	out, err := QueryRows(ctx, b.r, scanCredential, `SELECT `+credentialCols+` FROM credentials WHERE kind = ? ORDER BY created, `+b.d.Ord, string(kind))
	if err != nil {
		return nil, fmt.Errorf("list %s credentials: %w", kind, b.note(err))
	}
	return out, nil
}

// RevokeCredential revokes credential id of kind; a second revocation
// keeps the first time.
func (b *Base) RevokeCredential(ctx context.Context, kind store.CredentialKind, id string, at time.Time) error {
	now, err := codec.Time(at)
	if err == nil {
		err = b.exec1(ctx, `UPDATE credentials SET revoked = coalesce(revoked, ?) WHERE id = ? AND kind = ?`, now, id, string(kind))
	}
	if err != nil {
		return fmt.Errorf("revoke %s credential %s: %w", kind, id, err)
	}
	return nil
}

// RevokeCredentials revokes every unrevoked credential of kind.
func (b *Base) RevokeCredentials(ctx context.Context, kind store.CredentialKind, at time.Time) (int, error) {
	now, err := codec.Time(at)
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	n, err := b.exec(ctx, `UPDATE credentials SET revoked = ? WHERE kind = ? AND revoked IS NULL`, now, string(kind))
	if err != nil {
		return 0, fmt.Errorf("revoke %s credentials: %w", kind, err)
	}
	return int(n), nil
}

// PurgeCredentials deletes the credentials that expired before before.
func (b *Base) PurgeCredentials(ctx context.Context, before time.Time) (int, error) {
	t, err := codec.Time(before)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	n, err := b.exec(ctx, `DELETE FROM credentials WHERE expires < ?`, t)
	if err != nil {
		return 0, fmt.Errorf("purge credentials: %w", err)
	}
	return int(n), nil
}
