package store

import (
	"context"
	"time"
)

// Process is the durable record of one process warden started for an
// agent (a tool call, a step, a worker, an MCP server), written before
// the process runs anything and removed once it has been reaped. Rows
// left behind name processes whose spawner died without reaping them:
// the next host kills them and confirms their death before it retries
// or abandons their runs (fencing).
type Process struct {
	// ID names the record (unique).
	ID string
	// Spawner is the id of the host (or local gate) that started it;
	// SpawnerPID and SpawnerStart name that process (pid and start time
	// in clock ticks since boot), so a live spawner's processes are left
	// alone.
	Spawner      string
	SpawnerPID   int
	SpawnerStart uint64
	// Machine names the machine the process runs on (sandbox.MachineID):
	// pids and boot ids mean something only there, so on a store several
	// machines share, a host fences only its own machine's records. ""
	// (records written before the field existed, SQLite only) is taken
	// as this machine.
	Machine string
	// Boot is the kernel's boot id when it started: after a reboot every
	// recorded pid is meaningless and nothing is killed.
	Boot string
	// PID and Start name the process warden spawned (its host pid and
	// start time); PGID is its process group.
	PID   int
	Start uint64
	PGID  int
	// Sandboxed is true when PID is the init of its own PID namespace:
	// killing it kills everything the call started.
	Sandboxed bool
	// Owner is the owner's notation; Run groups the processes of one
	// cron or kanban run ("cron:RUN", "kanban:RUN"), "" otherwise.
	Owner string
	Run   string
	// What names the process for logs: its program, never its
	// arguments (they may hold secrets).
	What string
	// TempDir is the call's private temporary directory on the host,
	// removed once the process is gone.
	TempDir string
	Started time.Time
}

// Processes records the processes warden starts (see Process).
type Processes interface {
	// RecordProcess writes p durably.
	RecordProcess(ctx context.Context, p Process) error
	// ForgetProcess removes the record id; a missing one is no error.
	ForgetProcess(ctx context.Context, id string) error
	// ListProcesses returns every record, oldest first.
	ListProcesses(ctx context.Context) ([]Process, error)
}

// KanbanRunKey and CronRunKey are the Run of the processes of a kanban
// run and of a cron run. A run that process records still name is
// neither reclaimed nor failed for a dead host (BoardStore.ReclaimRuns,
// Hosts.ReapHosts): what it started may still be running on its
// machine, and only that machine's fence can confirm it gone.
func KanbanRunKey(run string) string { return "kanban:" + run }

// CronRunKey: see KanbanRunKey.
func CronRunKey(run string) string { return "cron:" + run }
