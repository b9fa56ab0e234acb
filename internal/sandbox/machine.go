package sandbox

import (
	"os"
	"strings"
	"sync"
)

// MachineID names this machine in process records (store.Process's
// Machine): the systemd machine id (/etc/machine-id, else D-Bus's copy
// in /var/lib/dbus/machine-id), which stays the same across reboots
// and renames, and only without one the host name, as "host:NAME".
// Pids and boot ids mean something only on their machine: on a store
// several machines share, Fence touches only records with this id.
//
// Two hosts that report the same id must share one kernel and one PID
// namespace (one machine, not two containers or clones of one image
// with a baked-in machine id): the fence of one would take the other's
// pids for its own. docs/multi-host.md says how to give each a
// distinct id.
func MachineID() string {
	machineOnce.Do(func() { machine = readMachineID() })
	return machine
}

var (
	machineOnce sync.Once
	machine     string
)

func readMachineID() string {
	for _, f := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// An image built without systemd may hold an empty file or
		// "uninitialized" (systemd's first-boot marker).
		if id := strings.TrimSpace(string(b)); id != "" && id != "uninitialized" {
			return id
		}
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "unknown"
	}
	return "host:" + name
}
