package ancestry

import (
	"errors"
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PeerCred reads the credentials of c's peer as the kernel recorded them
// at connect time: LOCAL_PEERCRED (a struct xucred: uid and groups) and
// LOCAL_PEERPID (its pid).
func PeerCred(c *net.UnixConn) (Cred, error) {
	var (
		x   *unix.Xucred
		pid int
	)
	err := sockopt(c, func(fd int) (err error) {
		if x, err = unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED); err != nil {
			return fmt.Errorf("LOCAL_PEERCRED: %w", err)
		}
		if pid, err = unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err != nil {
			return fmt.Errorf("LOCAL_PEERPID: %w", err)
		}
		return nil
	})
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	cred, err := parseXucred(unsafe.Slice((*byte)(unsafe.Pointer(x)), unsafe.Sizeof(*x)), int32(pid))
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	return cred, nil
}

// The offsets darwin.go parses are x/sys's (see proc_darwin.go).
func _() {
	var c unix.Xucred
	var x [1]struct{}
	_ = x[unsafe.Sizeof(c)-xucredSize]
	_ = x[xucredSize-unsafe.Sizeof(c)]
	_ = x[unsafe.Offsetof(c.Uid)-xucredUID]
	_ = x[xucredUID-unsafe.Offsetof(c.Uid)]
	_ = x[unsafe.Offsetof(c.Ngroups)-xucredNgroups]
	_ = x[xucredNgroups-unsafe.Offsetof(c.Ngroups)]
	_ = x[unsafe.Offsetof(c.Groups)-xucredGroups]
	_ = x[xucredGroups-unsafe.Offsetof(c.Groups)]
	_ = x[len(c.Groups)-xucredMaxGrp]
	_ = x[xucredMaxGrp-len(c.Groups)]
}

// ErrNoPidfd: macOS gives no handle on a socket peer that outlives its
// pid; Permit instead re-reads the peer's start time (see Proc.Start).
var ErrNoPidfd = errors.New("no pidfd for socket peers on macOS")

// Pidfd is a handle on a peer process; macOS has none.
type Pidfd struct{}

// PeerPidfd is not available on macOS.
func PeerPidfd(*net.UnixConn) (*Pidfd, error) { return nil, ErrNoPidfd }

// Alive is never reached on macOS.
func (*Pidfd) Alive() error { return ErrNoPidfd }

// Close does nothing.
func (*Pidfd) Close() error { return nil }
