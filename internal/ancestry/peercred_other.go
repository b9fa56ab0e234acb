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
