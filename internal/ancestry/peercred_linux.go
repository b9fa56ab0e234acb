package ancestry

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// PeerCred reads SO_PEERCRED from c.
func PeerCred(c *net.UnixConn) (Cred, error) {
	var cred *syscall.Ucred
	err := sockopt(c, func(fd int) (err error) {
		if cred, err = syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED); err != nil {
			return fmt.Errorf("SO_PEERCRED: %w", err)
		}
		return nil
	})
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	return Cred{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}

// soPeerPidfd is SO_PEERPIDFD (Linux 6.5): the same value on every
// architecture Go supports.
const soPeerPidfd = 77

// ErrNoPidfd: the kernel gives no pidfd for a socket peer (older than
// Linux 6.5); checks on /proc/PID then cannot be tied to the very
// process that connected.
var ErrNoPidfd = errors.New("kernel gives no pidfd for socket peers (SO_PEERPIDFD, Linux 6.5)")

// Pidfd is a handle on the process that made a connection. Unlike its
// pid, it cannot come to name another process: Alive tells whether that
// very process still runs, so what was read from /proc/PID while it ran
// was about it and not about a later process that reused the pid.
type Pidfd struct{ fd int }

// PeerPidfd returns a handle on c's peer process (SO_PEERPIDFD). Close
// it when done.
func PeerPidfd(c *net.UnixConn) (*Pidfd, error) {
	var fd int
	err := sockopt(c, func(s int) (err error) {
		fd, err = unix.GetsockoptInt(s, unix.SOL_SOCKET, soPeerPidfd)
		return err
	})
	if errors.Is(err, unix.ENOPROTOOPT) {
		return nil, ErrNoPidfd
	}
	if err != nil {
		return nil, fmt.Errorf("peer pidfd: %w", err)
	}
	unix.CloseOnExec(fd)
	return &Pidfd{fd: fd}, nil
}

// Alive returns nil while the process runs, and an error once it has
// exited (even if its pid now names another process).
func (p *Pidfd) Alive() error {
	if err := unix.PidfdSendSignal(p.fd, 0, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return errors.New("the process that connected has exited")
		}
		return fmt.Errorf("peer pidfd: %w", err)
	}
	return nil
}

// Close releases the handle.
func (p *Pidfd) Close() error { return unix.Close(p.fd) }
