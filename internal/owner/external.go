package owner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// ExternalKey returns the session key of another agent's session: "ext-",
// a readable slug of the agent's name, "-", and 16 hex digits of a
// SHA-256 over the agent and its session id. Session-scoped state
// (grants, yolo, the pending queue) is keyed by it, so it must differ
// for every (agent, session) pair: the slug is only for people reading
// a list, the hash is what keeps two agents or two sessions of one
// agent from ever sharing a key, whatever characters their ids hold.
// Ids never contain NUL (checkID refuses control characters), so the
// hashed pair is unambiguous.
func ExternalKey(agent, session string) string {
	sum := sha256.Sum256([]byte(agent + "\x00" + session))
	var slug strings.Builder
	for _, r := range strings.ToLower(agent) {
		if slug.Len() >= 24 {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			slug.WriteRune(r)
		case r == '-' || r == '_' || r == '.':
			slug.WriteByte('-')
		}
	}
	s := slug.String()
	if s == "" {
		s = "agent"
	}
	return "ext-" + s + "-" + hex.EncodeToString(sum[:8])
}

// ExternalSession returns the owner of another agent's session:
// external:AGENT/SESSION with session key ExternalKey(agent, session),
// answered on ch when ch is non-nil (the host's console, or the agent's
// own prompt when warden only advises it). The hook and MCP edges build
// their owners here, so both derive the same key for the same session.
func ExternalSession(agent, session string, ch AnswerChannel) (Owner, error) {
	o, err := External(agent, session)
	if err == nil {
		o, err = o.WithSession(ExternalKey(agent, session))
	}
	if err == nil && ch != nil {
		o, err = o.WithChannel(ch)
	}
	if err != nil {
		return Owner{}, fmt.Errorf("external session %s/%s: %w", agent, session, err)
	}
	return o, nil
}
