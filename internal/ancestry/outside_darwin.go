package ancestry

import (
	"errors"
	"fmt"
)

// Outside on macOS, which has no namespaces to compare: it checks that
// pid is a running process and returns Outside{Seatbelt: true}. The
// proof that a peer is not a sandboxed tool run rests on the Seatbelt
// profile (a confined process cannot connect to the host's sockets) and
// on Boundary.Check, which the admin socket runs as well: no descendant
// of the host and no member of a tool-run process group passes. A
// process that both leaves its group (setsid) and is re-parented is not
// seen by the walk; the profile still keeps it from the socket.
func (b Boundary) Outside(pid int, _ bool) (Outside, error) {
	if b.Host <= 0 {
		return Outside{}, errors.New("admin boundary: no host pid")
	}
	if _, err := b.FS.Stat(pid); err != nil {
		return Outside{}, fmt.Errorf("admin boundary: cannot read process %d, refusing it: %w", pid, err)
	}
	return Outside{Seatbelt: true}, nil
}
