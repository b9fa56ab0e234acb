package ancestry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrSandboxed: the peer runs in another PID, mount or user namespace
// than the host — a tool sandbox, a container — and may not use the
// admin API.
var ErrSandboxed = errors.New("process runs in another namespace than the host (a sandbox)")

// Outside is the proof that a process runs outside every tool sandbox:
// in the host's own PID, mount and user namespaces. It does not rest on
// ancestry, so a process that detached from its parents (setsid,
// re-parented to init) is judged the same.
type Outside struct {
	// PIDDepth is how many PID namespaces deep the process is, as
	// /proc/PID/status NSpid shows it (readable for any process), equal
	// to the host's.
	PIDDepth int
	// Inodes is true when the pid, mnt and user namespace links were read
	// and equal the host's; false when they could not be read (a root
	// peer of a host that is not root) and only PIDDepth was proven.
	Inodes bool
	// Seatbelt is set on macOS, which has no namespaces: nothing about
	// the process itself proves it is outside a sandbox-exec profile.
	// What stands in is that the profile every tool run gets denies
	// connecting to the host's sockets (a confined process cannot reach
	// the admin socket at all), and the ancestry and process-group walk
	// of Boundary.Check.
	Seatbelt bool
}

// String says what was proven, for audit records.
func (o Outside) String() string {
	switch {
	case o.Seatbelt:
		return "outside sandboxes (macOS: not in the host's ancestry or tool-run groups; sandboxed runs cannot reach the socket)"
	case o.Inodes:
		return "outside sandboxes"
	}
	return "outside sandboxes (pid namespace checked; mount and user namespaces unreadable)"
}

// namespaces are the namespace links this package compares.
var namespaces = []string{"pid", "mnt", "user"}

// Namespaces reads the pid, mnt and user namespace links of pid
// ("pid:[4026531836]", …). Reading another process's links needs
// ptrace-read access to it (same uid and dumpable, or privilege).
func (f FS) Namespaces(pid int) (map[string]string, error) {
	out := make(map[string]string, len(namespaces))
	for _, ns := range namespaces {
		l, err := os.Readlink(filepath.Join(f.root(), strconv.Itoa(pid), "ns", ns))
		if err != nil {
			return nil, fmt.Errorf("namespaces of process %d: %w", pid, err)
		}
		out[ns] = l
	}
	return out, nil
}

// PIDDepth returns how many PID namespaces pid is nested in, counted
// from the namespace this proc file system belongs to: the number of
// ids on the NSpid line of /proc/PID/status (1 for a process of this
// namespace, more for one inside a nested PID namespace). Any process
// can read it.
func (f FS) PIDDepth(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(f.root(), strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("status of process %d: %w", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			ids := strings.Fields(rest)
			if len(ids) == 0 {
				break
			}
			if ids[0] != strconv.Itoa(pid) {
				return 0, fmt.Errorf("status of process %d: NSpid names %s", pid, ids[0])
			}
			return len(ids), nil
		}
	}
	return 0, fmt.Errorf("status of process %d: no NSpid line (kernel older than 4.1?)", pid)
}
