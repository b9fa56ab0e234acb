//go:build !linux && !darwin

package ancestry

import (
	"errors"
	"net"
)

// errUnsupported: this system has no reader of peer credentials or
// processes; every peer is refused.
var errUnsupported = errors.New("not supported on this system (warden runs on Linux and macOS)")

// PeerCred is not implemented on this system: every peer is refused.
func PeerCred(*net.UnixConn) (Cred, error) {
	return Cred{}, errors.New("peer credentials: " + errUnsupported.Error())
}

// statSystem cannot read processes on this system.
func statSystem(pid int) (Proc, error) {
	return Proc{}, errors.New("stat process: " + errUnsupported.Error())
}

// ErrNoPidfd: no pidfd for socket peers on this system.
var ErrNoPidfd = errors.New("no pidfd for socket peers on this system")

// Pidfd is a handle on a peer process; not available on this system.
type Pidfd struct{}

// PeerPidfd is not implemented on this system.
func PeerPidfd(*net.UnixConn) (*Pidfd, error) { return nil, ErrNoPidfd }

// Alive is never reached on this system.
func (*Pidfd) Alive() error { return ErrNoPidfd }

// Close does nothing.
func (*Pidfd) Close() error { return nil }
