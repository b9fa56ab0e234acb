package localapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/user"
	"strconv"

	"github.com/wardenhq/warden/internal/ancestry"
)

// Peer is the process on the other end of a socket connection, as the
// kernel reports it. It cannot be forged by the client.
type Peer struct {
	UID int
	GID int
	PID int
}

// String names the peer for audit records: "alice (uid 1000)".
func (p Peer) String() string {
	uid := strconv.Itoa(p.UID)
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		return u.Username + " (uid " + uid + ")"
	}
	return "uid " + uid
}

// errNoPeer is what a connection without verified credentials carries:
// the default is refusal.
var errNoPeer = errors.New("peer credentials unavailable")

// peerKey is the context key for the connection's peer.
type peerKey struct{}

// peerResult is a peer or why there is none.
type peerResult struct {
	peer Peer
	err  error
}

// connContext binds the connection's peer credentials to every request
// on it (http.Server.ConnContext): identity comes from the connection,
// at the edge.
func connContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return context.WithValue(ctx, peerKey{}, peerResult{err: fmt.Errorf("%w: not a unix socket connection", errNoPeer)})
	}
	p, err := peerCred(uc)
	if err != nil {
		return context.WithValue(ctx, peerKey{}, peerResult{err: fmt.Errorf("%w: %w", errNoPeer, err)})
	}
	return context.WithValue(ctx, peerKey{}, peerResult{peer: p})
}

// peerFrom returns the request's peer. A context without one (a
// connection that did not go through connContext) is refused.
func peerFrom(ctx context.Context) (Peer, error) {
	r, ok := ctx.Value(peerKey{}).(peerResult)
	if !ok {
		return Peer{}, errNoPeer
	}
	return r.peer, r.err
}

// PeerPolicy decides which local processes may use the admin API.
type PeerPolicy struct {
	// UID is the host's own uid; that user and root are admitted.
	UID int
	// Boundary refuses a process that descends from the host: a tool
	// run, a kanban worker or anything they started (invariant 11). The
	// zero Boundary refuses every peer.
	Boundary ancestry.Boundary
}

// Permit is the one check every connection passes before a handler
// runs: the host's own uid or root, and then a process that does not
// descend from the host (its ancestry in /proc, and the host's worker
// and tool-run process groups).
func (pp PeerPolicy) Permit(p Peer) error {
	if p.UID != pp.UID && p.UID != 0 {
		return fmt.Errorf("uid %d may not use this host's admin API (only uid %d and root)", p.UID, pp.UID)
	}
	if err := pp.Boundary.Check(p.PID); err != nil {
		return fmt.Errorf("an agent's process may not use this host's admin API: %w", err)
	}
	return nil
}
