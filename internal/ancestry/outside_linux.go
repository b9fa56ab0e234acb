package ancestry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Outside proves that pid runs in the host's PID, mount and user
// namespaces, or returns an error wrapping ErrSandboxed for one that
// does not, or another error when it cannot tell (refuse then: fail
// closed). rootPeer says the kernel reported uid 0 for the peer: a
// process a non-root host may not inspect, and which no sandbox of a
// non-root host can produce (its user namespace maps the host's uid
// only), so for it the PID namespace depth is proof enough.
func (b Boundary) Outside(pid int, rootPeer bool) (Outside, error) {
	if b.Host <= 0 {
		return Outside{}, errors.New("admin boundary: no host pid")
	}
	hostDepth, err := b.FS.PIDDepth(b.Host)
	if err != nil {
		return Outside{}, fmt.Errorf("admin boundary: %w", err)
	}
	depth, err := b.FS.PIDDepth(pid)
	if err != nil {
		return Outside{}, fmt.Errorf("admin boundary: cannot read process %d, refusing it: %w", pid, err)
	}
	if depth != hostDepth {
		return Outside{}, fmt.Errorf("%w: process %d is %d PID namespaces deep, the host %d", ErrSandboxed, pid, depth, hostDepth)
	}
	mine, err := b.FS.Namespaces(b.Host)
	if err != nil {
		return Outside{}, fmt.Errorf("admin boundary: %w", err)
	}
	theirs, err := b.FS.Namespaces(pid)
	switch {
	case err != nil && rootPeer && errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0:
		return Outside{PIDDepth: depth}, nil
	case err != nil:
		return Outside{}, fmt.Errorf("admin boundary: cannot read the namespaces of process %d, refusing it: %w", pid, err)
	}
	for _, ns := range namespaces {
		if theirs[ns] != mine[ns] {
			return Outside{}, fmt.Errorf("%w: process %d is in %s, the host in %s", ErrSandboxed, pid, theirs[ns], mine[ns])
		}
	}
	return Outside{PIDDepth: depth, Inodes: true}, nil
}
