package localapi

import (
	"fmt"
	"net"
	"syscall"
)

// peerCred reads SO_PEERCRED: the uid, gid and pid of the process that
// connected, as the kernel recorded them at connect time.
func peerCred(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return Peer{}, fmt.Errorf("peer credentials: SO_PEERCRED: %w", cerr)
	}
	return Peer{UID: int(cred.Uid), GID: int(cred.Gid), PID: int(cred.Pid)}, nil
}
