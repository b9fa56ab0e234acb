package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Records lists and forgets process records (*sqlite.DB is one).
type Records interface {
	ListProcesses(ctx context.Context) ([]store.Process, error)
	ForgetProcess(ctx context.Context, id string) error
}

// ErrNotDead: a fenced process could not be confirmed dead.
var ErrNotDead = errors.New("leftover process would not die")

// fenceTimeout bounds how long Fence waits for one leftover to die.
const fenceTimeout = 10 * time.Second

// Fence kills what dead spawners left behind on this machine and
// confirms it is gone:
// for every recorded process whose spawner (a host or local gate that
// crashed or was killed) is no longer running, it kills the process —
// a sandbox's PID namespace with its init, or, in mode off, the members
// of its process group — waits until nothing of it is left, removes its
// temporary directory and forgets the record. Processes of a live
// spawner are left alone. Records from an earlier boot name nothing and
// are forgotten.
//
// Only this machine's records are considered (MachineID; a record
// without one is this machine's, from before records named it): on a
// store several machines share, another machine's pids and boot ids
// mean nothing here, so its records are never killed, forgotten or
// their temporary directories removed from here, whether their spawner
// is alive or not. A dead host's leftovers are fenced by the next host
// to start (or reap) on its machine.
//
// Call it before retrying or abandoning runs at start: then a retried
// step never overlaps the attempt it replaces. It returns the fenced
// records (for the log); an error means something could not be
// confirmed dead, and nothing should be retried.
func Fence(ctx context.Context, recs Records) ([]store.Process, error) {
	return fence(ctx, recs, MachineID(), bootID())
}

// fence is Fence on machine, in its boot boot.
func fence(ctx context.Context, recs Records, machine, boot string) ([]store.Process, error) {
	list, err := recs.ListProcesses(ctx)
	if err != nil {
		return nil, fmt.Errorf("fence: %w", err)
	}
	var done []store.Process
	for _, p := range list {
		if p.Machine != "" && p.Machine != machine {
			continue
		}
		if p.Boot == boot && alive(p.SpawnerPID, p.SpawnerStart) {
			continue
		}
		if p.Boot == boot {
			if err := kill(ctx, p); err != nil {
				return done, fmt.Errorf("fence %s (pid %d, %s, owner %s): %w", p.ID, p.PID, p.What, p.Owner, err)
			}
		}
		if p.TempDir != "" {
			_ = os.RemoveAll(p.TempDir)
		}
		if err := recs.ForgetProcess(ctx, p.ID); err != nil {
			return done, fmt.Errorf("fence: %w", err)
		}
		done = append(done, p)
	}
	return done, nil
}

// kill kills what is left of p and waits until it is gone.
func kill(ctx context.Context, p store.Process) error {
	ctx, cancel := context.WithTimeout(ctx, fenceTimeout)
	defer cancel()
	for {
		left := leftovers(p)
		if len(left) == 0 {
			return nil
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: pids %v", ErrNotDead, left)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// leftovers are the live processes of p: its init (sandbox: the PID
// namespace dies with it), or the members of its process group that
// started no earlier than it (mode off; a member that left the group
// is out of reach).
func leftovers(p store.Process) []int {
	if p.Sandboxed {
		if alive(p.PID, p.Start) {
			return []int{p.PID}
		}
		return nil
	}
	var out []int
	if p.PGID <= 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if ok && st.pgid == p.PGID && st.start >= p.Start && st.state != 'Z' && st.state != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid is the process that started at start and
// has not exited (a zombie has).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, ok := readStat(pid)
	return ok && st.start == start && st.state != 'Z' && st.state != 'X'
}

type procStat struct {
	state byte
	pgid  int
	start uint64
}

// readStat reads /proc/PID/stat's state, process group and start time
// (the fields after the command name, found from its last ')').
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], pgid: pgid, start: start}, true
}
