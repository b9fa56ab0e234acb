//go:build linux

package cluster

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReapFencesThisMachineOnly: a host died holding two kanban runs,
// one with a leftover step on this machine, one with a leftover on
// another machine. A live host's reap kills and forgets this machine's
// leftover and reclaims its run; the other machine's run is left
// running, its record kept, until that machine's fence forgets it.
func TestReapFencesThisMachineOnly(t *testing.T) {
	dbs := openHosts(t, 2)
	dead, live := dbs[0], dbs[1]
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := dead.JoinHost(ctx, store.HostLease{ID: "dead"}, time.Millisecond)
	must("join", err)
	for _, id := range []string{"a", "b"} {
		_, err := dead.AddTask(ctx, store.Task{ID: id, Title: id, Body: id, Workspace: store.WorkspaceScratch, Script: []string{"true"}, Created: time.Now()})
		must("add task", err)
	}
	_, here, err := dead.ClaimTask(ctx, store.TaskClaim{Run: "r-here", At: time.Now(), Holder: "dead", Lease: time.Millisecond})
	must("claim", err)
	_, there, err := dead.ClaimTask(ctx, store.TaskClaim{Run: "r-there", At: time.Now(), Holder: "dead", Lease: time.Millisecond})
	must("claim", err)

	// The dead host: a process that has exited (no process of that pid
	// started at tick 1). Its leftover here: a live sleep.
	gone := exec.Command("/bin/true")
	must("start", gone.Run())
	leftover := exec.Command("/bin/sleep", "60")
	must("start", leftover.Start())
	exited := make(chan error, 1)
	go func() { exited <- leftover.Wait() }()
	t.Cleanup(func() { _ = leftover.Process.Kill() })
	st, err := ancestry.FS{}.Stat(leftover.Process.Pid)
	must("stat", err)
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	must("boot id", err)
	boot := strings.TrimSpace(string(b))
	rec := func(id, machine string, run store.TaskRun, pid int, start uint64) store.Process {
		return store.Process{ID: id, Spawner: "dead", SpawnerPID: gone.Process.Pid, SpawnerStart: 1, Machine: machine, Boot: boot,
			PID: pid, Start: start, PGID: pid, Sandboxed: true, Run: store.KanbanRunKey(run.ID), What: "sleep", Started: time.Now()}
	}
	must("record", dead.RecordProcess(ctx, rec("p-here", sandbox.MachineID(), here, leftover.Process.Pid, st.Start)))
	// The same pid and start time, but another machine's: they name
	// some process there, not this sleep.
	must("record", dead.RecordProcess(ctx, rec("p-there", "another-machine", there, leftover.Process.Pid, st.Start)))
	time.Sleep(50 * time.Millisecond) // far past the dead host's 1 ms leases

	m, err := Join(ctx, Options{Store: live, ID: "live", Lease: time.Hour, FailureLimit: 3,
		Fence: func(ctx context.Context) error { _, err := sandbox.Fence(ctx, live); return err }})
	must("join live", err)
	must("reap", m.reap(ctx))

	select {
	case err := <-exited:
		if ws, ok := leftover.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("leftover ended with %v, want killed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("this machine's leftover still runs after the reap")
	}
	runStatus := func(id string) store.TaskRunStatus {
		r, err := live.GetRun(ctx, id)
		must("get run", err)
		return r.Status
	}
	if got := runStatus(here.ID); got != store.TaskRunFailed {
		t.Errorf("run fenced here: %s, want failed (reclaimed)", got)
	}
	if got := runStatus(there.ID); got != store.TaskRunRunning {
		t.Errorf("run with a leftover on another machine: %s, want still running", got)
	}
	ps, err := live.ListProcesses(ctx)
	must("list", err)
	if len(ps) != 1 || ps[0].ID != "p-there" {
		t.Fatalf("records after the reap: %+v, want only p-there", ps)
	}

	// That machine's next host fences it (its own fence forgets the
	// record); the next reap anywhere reclaims the run.
	must("forget", dead.ForgetProcess(ctx, "p-there"))
	must("reap", m.reap(ctx))
	if got := runStatus(there.ID); got != store.TaskRunFailed {
		t.Errorf("run after its machine's fence: %s, want failed (reclaimed)", got)
	}
	must("leave", m.Leave(ctx))
}
