package store

import (
	"context"
	"errors"
	"time"
)

// ErrCredentialSpent: a one-time credential (a console login link) was
// already used, or is revoked or expired; it can never be used again.
var ErrCredentialSpent = errors.New("credential already used, revoked or expired")

// CredentialKind is what a credential lets its holder do.
type CredentialKind string

// Credential kinds.
const (
	// LoginLink is a one-time, short-lived console login link, issued
	// over the admin socket (warden console).
	LoginLink CredentialKind = "login"
	// ConsoleSession is a browser's console login: the cookie a used
	// login link set.
	ConsoleSession CredentialKind = "session"
	// APIToken is a script's bearer token with scopes (warden token).
	APIToken CredentialKind = "token"
)

// Credential is a secret warden issued, as the store keeps it: never the
// secret itself, only its hash. Times are zero when unset.
type Credential struct {
	// ID is public: it names the credential in lists, revocations and
	// audit records.
	ID   string         `json:"id"`
	Kind CredentialKind `json:"kind"`
	// Hash is the hex SHA-256 of the secret.
	Hash string `json:"-"`
	// Name is an API token's label.
	Name string `json:"name,omitempty"`
	// Scopes are an API token's scopes.
	Scopes []string `json:"scopes,omitempty"`
	// Parent is the login link a console session came from.
	Parent string `json:"parent,omitempty"`
	// By is the identity that was proven when the credential was issued
	// (the admin socket peer that asked for it).
	By string `json:"by"`
	// Remote is the address a console session logged in from.
	Remote  string    `json:"remote,omitempty"`
	Created time.Time `json:"created_at"`
	Expires time.Time `json:"expires_at"`
	// Used is when a login link was used.
	Used    time.Time `json:"used_at,omitzero"`
	Revoked time.Time `json:"revoked_at,omitzero"`
}

// Live reports whether c may be used at now: not revoked, not expired,
// and (for a login link) not used.
func (c Credential) Live(now time.Time) bool {
	return c.Revoked.IsZero() && now.Before(c.Expires) && (c.Kind != LoginLink || c.Used.IsZero())
}

// Credentials keeps login links, console sessions and API tokens,
// hashed.
type Credentials interface {
	// AddCredential stores c; its ID and Hash must be new.
	AddCredential(ctx context.Context, c Credential) error
	// CredentialByHash returns the credential of kind whose secret
	// hashes to hash, in whatever state it is (the caller checks Live),
	// or ErrNotFound.
	CredentialByHash(ctx context.Context, kind CredentialKind, hash string) (Credential, error)
	// UseCredential marks the credential of kind whose secret hashes to
	// hash used at at, iff it is unused, unrevoked and unexpired at at:
	// one compare-and-swap, so of two concurrent uses one wins. It
	// returns the credential as used; ErrNotFound if there is none,
	// ErrCredentialSpent (with the row) if it can no longer be used.
	UseCredential(ctx context.Context, kind CredentialKind, hash string, at time.Time) (Credential, error)
	// ListCredentials lists the credentials of kind, oldest first.
	ListCredentials(ctx context.Context, kind CredentialKind) ([]Credential, error)
	// RevokeCredential revokes credential id of kind at at; revoking it
	// again keeps the first time. ErrNotFound if there is none.
	RevokeCredential(ctx context.Context, kind CredentialKind, id string, at time.Time) error
	// RevokeCredentials revokes every credential of kind that is not
	// revoked yet and returns how many it revoked.
	RevokeCredentials(ctx context.Context, kind CredentialKind, at time.Time) (int, error)
	// PurgeCredentials deletes credentials that expired before before,
	// returning how many.
	PurgeCredentials(ctx context.Context, before time.Time) (int, error)
}
