package ancestry

import (
	"fmt"
	"net"
	"syscall"
)

// Cred is the process on the other end of a unix socket connection, as
// the kernel recorded it when the connection was made.
type Cred struct {
	PID int
	UID int
	GID int
}

// PeerCred reads SO_PEERCRED from c.
func PeerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return Cred{}, fmt.Errorf("peer credentials: SO_PEERCRED: %w", cerr)
	}
	return Cred{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}
