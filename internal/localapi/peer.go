package localapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/connlimit"
)

// Peer is the process on the other end of a socket connection, as the
// kernel reports it. It cannot be forged by the client.
type Peer struct {
	UID int
	GID int
	PID int
	// conn is the connection, for a handle on the peer process
	// (SO_PEERPIDFD); nil in tests that make a Peer by hand.
	conn *net.UnixConn
}

// String names the peer by what the kernel reported: "uid 1000 pid
// 4242".
func (p Peer) String() string {
	return "uid " + strconv.Itoa(p.UID) + " pid " + strconv.Itoa(p.PID)
}

// Identity is a peer as PeerPolicy.Permit proved it: the kernel's
// credentials of the process that connected to the admin socket, and
// that it runs outside every tool sandbox (in the host's own
// namespaces). It is what answers and changes are recorded as — never a
// name the client chose.
type Identity struct {
	Peer
	Outside ancestry.Outside
}

// String is the identity for audit records: "uid 1000 pid 4242 via
// admin socket, outside sandboxes".
func (id Identity) String() string {
	return id.Peer.String() + " via admin socket, " + id.Outside.String()
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
	uc, ok := connlimit.Unwrap(c).(*net.UnixConn)
	if !ok {
		return context.WithValue(ctx, peerKey{}, peerResult{err: fmt.Errorf("%w: not a unix socket connection", errNoPeer)})
	}
	p, err := peerCred(uc)
	if err != nil {
		return context.WithValue(ctx, peerKey{}, peerResult{err: fmt.Errorf("%w: %w", errNoPeer, err)})
	}
	p.conn = uc
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
	// Boundary refuses a process that runs in a tool sandbox (another
	// PID, mount or user namespace than the host's) and, as defence in
	// depth, one that descends from the host: a tool run, a kanban
	// worker or anything they started (invariant 11). The zero Boundary
	// refuses every peer.
	Boundary ancestry.Boundary
}

// Permit is the one check every request passes before a handler runs:
// the host's own uid or root; a process in the host's own namespaces,
// so outside every tool sandbox (a proof that does not rest on
// ancestry: a detached process is judged the same); not a descendant
// of the host, nor in one of its worker or tool-run process groups
// (the /proc walk, kept as defence in depth); and, where the kernel
// gives a handle on the peer process, that very process still running
// once all this was read from /proc, so no check was about a later
// process that reused its pid (without one, the same start time before
// and after). It returns what was proven.
//
// On macOS there are no namespaces: the proof that the peer is outside
// every sandbox is that the Seatbelt profile of every tool run denies
// connecting to the host's sockets, with the ancestry and process-group
// walk as the check made here (see ancestry.Outside.Seatbelt and
// docs/install.md).
func (pp PeerPolicy) Permit(p Peer) (Identity, error) {
	if p.UID != pp.UID && p.UID != 0 {
		return Identity{}, fmt.Errorf("uid %d may not use this host's admin API (only uid %d and root)", p.UID, pp.UID)
	}
	var pidfd *ancestry.Pidfd
	if p.conn != nil {
		var err error
		switch pidfd, err = ancestry.PeerPidfd(p.conn); {
		case errors.Is(err, ancestry.ErrNoPidfd):
		case err != nil:
			return Identity{}, fmt.Errorf("admin boundary: %w", err)
		default:
			defer pidfd.Close()
		}
	}
	// Without a pidfd (macOS, Linux before 6.5) the peer's start time
	// is read before and after the checks: a pid that came to name
	// another process while they ran is refused. (The window between
	// connect and the first read remains; macOS hands out pids in
	// sequence up to 99999, so filling it takes a wrap of the pid
	// space.)
	var before ancestry.Proc
	if pidfd == nil {
		var err error
		if before, err = pp.Boundary.FS.Stat(p.PID); err != nil {
			return Identity{}, fmt.Errorf("admin boundary: cannot read process %d, refusing it: %w", p.PID, err)
		}
	}
	out, err := pp.Boundary.Outside(p.PID, p.UID == 0)
	if err != nil {
		return Identity{}, fmt.Errorf("a sandboxed process may not use this host's admin API: %w", err)
	}
	if err := pp.Boundary.Check(p.PID); err != nil {
		return Identity{}, fmt.Errorf("an agent's process may not use this host's admin API: %w", err)
	}
	if pidfd != nil {
		if err := pidfd.Alive(); err != nil {
			return Identity{}, fmt.Errorf("admin boundary: %w", err)
		}
	} else if after, err := pp.Boundary.FS.Stat(p.PID); err != nil || after.Start != before.Start {
		return Identity{}, fmt.Errorf("admin boundary: process %d exited while it was checked (its pid may name another process now)", p.PID)
	}
	return Identity{Peer: p, Outside: out}, nil
}

// identityKey is the context key of the identity ServeHTTP proved.
type identityKey struct{}

// identity returns the identity ServeHTTP proved for the request.
func identity(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}
