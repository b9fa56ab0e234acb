//go:build !linux

package ancestry

import (
	"errors"
	"net"
)

// Cred is the process on the other end of a unix socket connection.
type Cred struct {
	PID int
	UID int
	GID int
}

// PeerCred is not implemented off Linux: every peer is refused.
func PeerCred(*net.UnixConn) (Cred, error) {
	return Cred{}, errors.New("peer credentials: not supported on this system")
}

// ErrNoPidfd: no pidfd for socket peers on this system.
var ErrNoPidfd = errors.New("no pidfd for socket peers on this system")

// Pidfd is a handle on a peer process; not available off Linux.
type Pidfd struct{}

// PeerPidfd is not implemented off Linux.
func PeerPidfd(*net.UnixConn) (*Pidfd, error) { return nil, ErrNoPidfd }

// Alive is never reached off Linux.
func (*Pidfd) Alive() error { return ErrNoPidfd }

// Close does nothing.
func (*Pidfd) Close() error { return nil }
