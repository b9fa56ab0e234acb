package store

import (
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/grant"
)

// What every store requires of a row it adds, checked once here so the
// SQLite and PostgreSQL stores refuse the same things.

// CheckGrant checks a grant about to be added: an id, a known scope and
// grain, a pattern, and a session for a session grant.
func CheckGrant(g grant.Grant) error {
	switch {
	case g.ID == "":
		return errors.New("empty id")
	case g.Scope != grant.Session && g.Scope != grant.Permanent:
		return fmt.Errorf("unknown scope %q", g.Scope)
	case g.Scope == grant.Session && g.Session == "":
		return errors.New("a session grant needs a session")
	case g.Grain != grant.Exact && g.Grain != grant.Prefix && g.Grain != grant.Class:
		return fmt.Errorf("unknown grain %q", g.Grain)
	case g.Pattern == "":
		return errors.New("empty pattern")
	}
	return nil
}

// CheckCredential checks a credential about to be added (an id, a hex
// SHA-256 hash, an expiry, a known kind) and returns its scopes, empty
// rather than none.
func CheckCredential(c Credential) ([]string, error) {
	switch {
	case c.ID == "":
		return nil, errors.New("empty id")
	case len(c.Hash) != 64:
		return nil, errors.New("want a hex SHA-256 hash")
	case c.Expires.IsZero():
		return nil, errors.New("no expiry")
	}
	switch c.Kind {
	case LoginLink, ConsoleSession, APIToken:
	default:
		return nil, fmt.Errorf("unknown credential kind %q", c.Kind)
	}
	if c.Scopes == nil {
		return []string{}, nil
	}
	return c.Scopes, nil
}
