//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/store"
)

// TestFenceOnlyThisMachine: two machines share one store. Each one's
// fence kills and forgets the leftovers of its own dead spawners and
// never touches the other's records, whatever their spawner, boot or
// pids say here: another machine's live process with this machine's
// pid is not killed, its record is not forgotten and its temporary
// directory (a path that may exist here too) is not removed.
func TestFenceOnlyThisMachine(t *testing.T) {
	const here, there = "machine-a", "machine-b"
	boot := bootID()
	deadPID, deadStart := deadProcess(t)

	// Three real processes on this test's machine: what the records
	// name by pid and start time.
	start := func() (*exec.Cmd, uint64) {
		cmd := exec.Command("/bin/sleep", "60")
		must(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		st, err := procStart(cmd.Process.Pid)
		must(t, err)
		return cmd, st
	}
	mine, mineStart := start()
	theirs, theirsStart := start()
	theirsOld, theirsOldStart := start()
	dir := t.TempDir()
	tmp := func(name string) string {
		p := filepath.Join(dir, name)
		must(t, os.Mkdir(p, 0o700))
		return p
	}
	rec := &recorder{recs: map[string]store.Process{
		// This machine, dead spawner: killed, forgotten, temp dir gone.
		"mine": {ID: "mine", Machine: here, Boot: boot, SpawnerPID: deadPID, SpawnerStart: deadStart,
			PID: mine.Process.Pid, Start: mineStart, Sandboxed: true, TempDir: tmp("mine"), Run: "kanban:r1"},
		// The other machine, a spawner that looks dead from here (its
		// pid means nothing here): left alone.
		"theirs": {ID: "theirs", Machine: there, Boot: boot, SpawnerPID: deadPID, SpawnerStart: deadStart,
			PID: theirs.Process.Pid, Start: theirsStart, Sandboxed: true, TempDir: tmp("theirs"), Run: "kanban:r2"},
		// The other machine, another boot id: not "an earlier boot of
		// this machine", so not forgotten either.
		"theirs-old": {ID: "theirs-old", Machine: there, Boot: "another-boot", SpawnerPID: deadPID, SpawnerStart: deadStart,
			PID: theirsOld.Process.Pid, Start: theirsOldStart, Sandboxed: true, TempDir: tmp("theirs-old"), Run: "kanban:r3"},
		// This machine, an earlier boot: forgotten (nothing to kill).
		"mine-old": {ID: "mine-old", Machine: here, Boot: "earlier-boot", PID: 1, Start: 1, Sandboxed: true, TempDir: tmp("mine-old")},
		// This machine, from before records named their machine.
		"legacy": {ID: "legacy", Boot: "earlier-boot", PID: 1, Start: 1, Sandboxed: true},
	}}

	fenced, err := fence(t.Context(), rec, here, boot)
	must(t, err)
	got := map[string]bool{}
	for _, p := range fenced {
		got[p.ID] = true
	}
	if len(got) != 3 || !got["mine"] || !got["mine-old"] || !got["legacy"] {
		t.Errorf("fenced %v, want mine, mine-old and legacy", got)
	}
	if alive(mine.Process.Pid, mineStart) {
		t.Error("this machine's leftover is still alive")
	}
	for _, c := range []struct {
		cmd   *exec.Cmd
		start uint64
	}{{theirs, theirsStart}, {theirsOld, theirsOldStart}} {
		if !alive(c.cmd.Process.Pid, c.start) {
			t.Errorf("the other machine's process (pid %d) was killed", c.cmd.Process.Pid)
		}
	}
	for _, id := range []string{"theirs", "theirs-old"} {
		if _, ok := rec.recs[id]; !ok {
			t.Errorf("the other machine's record %s was forgotten", id)
		}
		if _, err := os.Stat(filepath.Join(dir, id)); err != nil {
			t.Errorf("the other machine's temporary directory %s: %v", id, err)
		}
	}
	for _, id := range []string{"mine", "mine-old"} {
		if _, err := os.Stat(filepath.Join(dir, id)); !os.IsNotExist(err) {
			t.Errorf("this machine's temporary directory %s: %v, want it removed", id, err)
		}
	}

	// The other machine's next host fences what is its own.
	fenced, err = fence(t.Context(), rec, there, boot)
	must(t, err)
	if len(fenced) != 2 || len(rec.recs) != 0 {
		t.Errorf("the other machine fenced %d, left %d records; want 2 and none", len(fenced), len(rec.recs))
	}
	if alive(theirs.Process.Pid, theirsStart) {
		t.Error("the other machine's own fence left its leftover alive")
	}
}

func TestMachineID(t *testing.T) {
	id := MachineID()
	if id == "" || id == "host:" {
		t.Fatalf("MachineID() = %q", id)
	}
	if MachineID() != id {
		t.Error("MachineID changed between calls")
	}
}
