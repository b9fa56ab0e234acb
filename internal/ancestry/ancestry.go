// Package ancestry tells whether a local process descends from warden's
// host: the admin boundary of invariant 11. Every tool run and every
// kanban worker is a child of the host, and so is everything they start,
// so a peer on the admin socket whose parent chain reaches the host is
// an agent's process and is refused, whatever its uid. The operator's
// CLI descends from the operator's shell, not from the host.
//
// The chain is read from /proc/PID/stat on Linux and from the kernel's
// process table (sysctl kern.proc.pid, struct kinfo_proc) on macOS;
// other systems have no reader and every peer is refused. A process that
// double-forks re-parents to init (or a subreaper) and leaves the chain;
// Boundary also refuses any process in a process group the host created
// for a worker or tool run (Groups), which a double fork keeps unless it
// also calls setsid or setpgid. What remains — a descendant that both
// leaves its group and double-forks — is out of reach of /proc ancestry;
// making the host a child subreaper (prctl PR_SET_CHILD_SUBREAPER) would
// keep even those under it.
//
// PeerCred reads the peer credentials of a unix socket connection
// (SO_PEERCRED on Linux; LOCAL_PEERCRED and LOCAL_PEERPID on macOS): the
// kernel's record of who connected, which the client cannot forge.
package ancestry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrAgentProcess: the peer descends from the host (a tool run or a
// worker, or something they started) and may not use the admin API.
var ErrAgentProcess = errors.New("process descends from a warden tool run or worker")

// maxDepth bounds a parent chain walk; real chains are a few dozen long.
const maxDepth = 4096

// Cred is the process on the other end of a unix socket connection, as
// the kernel recorded it when the connection was made.
type Cred struct {
	PID int
	UID int
	GID int
}

// Proc is one process as the kernel reports it (/proc/PID/stat on
// Linux, kinfo_proc on macOS).
type Proc struct {
	PID  int
	PPID int
	PGID int
	// SID is the session id (Linux only; 0 on macOS, whose kinfo_proc
	// does not carry it).
	SID int
	// Comm is the command name (at most 15 bytes, as the kernel keeps
	// it), for messages only.
	Comm string
	// Start is the start time, in the system's own unit (clock ticks
	// since boot on Linux, microseconds since the epoch on macOS): with
	// PID it names one process even after the pid is reused. Compare it
	// only with another Start read on the same system.
	Start uint64
}

// FS reads processes: from the running system's kernel when Root is ""
// (/proc on Linux, sysctl on macOS), or from a proc file system mounted
// at Root (tests give a fake one).
type FS struct {
	// Root is a proc file system's mount point; "" means the running
	// system's own process table.
	Root string
}

func (f FS) root() string {
	if f.Root == "" {
		return "/proc"
	}
	return f.Root
}

// Stat reads one process.
func (f FS) Stat(pid int) (Proc, error) {
	if pid <= 0 {
		return Proc{}, fmt.Errorf("stat process %d: not a pid", pid)
	}
	if f.Root == "" {
		return statSystem(pid)
	}
	return f.procStat(pid)
}

// procStat reads one process from the proc file system at f's root.
func (f FS) procStat(pid int) (Proc, error) {
	b, err := os.ReadFile(filepath.Join(f.root(), strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, err)
	}
	p, err := parseStat(string(b))
	if err != nil {
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, err)
	}
	if p.PID != pid {
		return Proc{}, fmt.Errorf("stat process %d: file names pid %d", pid, p.PID)
	}
	return p, nil
}

// parseStat reads the fields of /proc/PID/stat this package uses. The
// command name sits in parentheses and may itself hold spaces and
// parentheses, so the fields after it are found from the last ')'.
func parseStat(s string) (Proc, error) {
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, errors.New("malformed stat: no (comm)")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Proc{}, fmt.Errorf("malformed stat: pid: %w", err)
	}
	// After ")": state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime … (proc(5), fields 3 to 22).
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return Proc{}, fmt.Errorf("malformed stat: %d fields after comm", len(f))
	}
	p := Proc{PID: pid, Comm: s[open+1 : end]}
	ints := []*int{&p.PPID, &p.PGID, &p.SID}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(f[1+i]); err != nil {
			return Proc{}, fmt.Errorf("malformed stat: field %d: %w", 4+i, err)
		}
	}
	if p.Start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return Proc{}, fmt.Errorf("malformed stat: starttime: %w", err)
	}
	return p, nil
}

// Chain returns pid and its ancestors, pid first, up to the first
// process without a parent (init, or the kernel's threads).
func (f FS) Chain(pid int) ([]Proc, error) {
	var chain []Proc
	for cur := pid; cur > 0; {
		if len(chain) == maxDepth {
			return chain, fmt.Errorf("process %d: ancestry deeper than %d", pid, maxDepth)
		}
		p, err := f.Stat(cur)
		if err != nil {
			return chain, err
		}
		chain = append(chain, p)
		cur = p.PPID
	}
	return chain, nil
}

// Within reports whether pid is root or one of root's descendants.
func (f FS) Within(pid, root int) (bool, error) {
	chain, err := f.Chain(pid)
	if err != nil {
		return false, err
	}
	for _, p := range chain {
		if p.PID == root {
			return true, nil
		}
	}
	return false, nil
}

// Groups is the set of process groups the host created for workers and
// tool runs (each started with Setpgid, so its group id is its pid). It
// is safe for concurrent use; the zero value is empty and ready.
type Groups struct {
	mu sync.Mutex
	m  map[int]int // pgid → references
}

// Add records a group; every Add needs one Remove.
func (g *Groups) Add(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[int]int{}
	}
	g.m[pgid]++
}

// Remove forgets one Add of a group. Remove it only once nothing of the
// group can run any more (the host killed the whole group).
func (g *Groups) Remove(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m[pgid]--; g.m[pgid] <= 0 {
		delete(g.m, pgid)
	}
}

// Has reports whether pgid is a group the host created.
func (g *Groups) Has(pgid int) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[pgid] > 0
}

// Boundary decides which local processes are agents' processes.
type Boundary struct {
	// Host is the host process's pid (os.Getpid() in the host).
	Host int
	// Groups are the host's worker and tool-run process groups; nil
	// means none are known.
	Groups *Groups
	// FS reads /proc; the zero value reads /proc.
	FS FS
}

// Check returns nil for a process that does not descend from the host,
// and an error wrapping ErrAgentProcess, naming the chain, for one that
// does (the host itself is not its own descendant: an in-process client
// passes). A process it cannot read (gone, or /proc unavailable) is
// refused: the boundary fails closed.
func (b Boundary) Check(pid int) error {
	if b.Host <= 0 {
		return errors.New("admin boundary: no host pid")
	}
	if pid == b.Host {
		return nil
	}
	chain, err := b.FS.Chain(pid)
	if err != nil {
		return fmt.Errorf("admin boundary: cannot read the ancestry of process %d, refusing it: %w", pid, err)
	}
	for i, p := range chain {
		if b.Groups.Has(p.PGID) {
			return fmt.Errorf("%w: %s is in process group %d, which the host started for a worker or tool run", ErrAgentProcess, describe(chain[:i+1]), p.PGID)
		}
		if i > 0 && p.PID == b.Host {
			return fmt.Errorf("%w: %s", ErrAgentProcess, describe(chain[:i+1]))
		}
	}
	return nil
}

// describe renders a chain child first: "sh[412] < warden[400]".
func describe(chain []Proc) string {
	parts := make([]string, len(chain))
	for i, p := range chain {
		parts[i] = fmt.Sprintf("%s[%d]", p.Comm, p.PID)
	}
	return strings.Join(parts, " < ")
}
