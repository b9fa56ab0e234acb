package sandbox

import (
	"os"
	"strings"

	"github.com/wardenhq/warden/internal/ancestry"
)

// procID names a process across pid reuse and reboots.
type procID struct {
	pid   int
	start uint64
	boot  string
}

// self names this process.
func self() (procID, error) {
	start, err := procStart(os.Getpid())
	return procID{pid: os.Getpid(), start: start, boot: bootID()}, err
}

// procStart is pid's start time in clock ticks since boot.
func procStart(pid int) (uint64, error) {
	p, err := ancestry.FS{}.Stat(pid)
	if err != nil {
		return 0, err
	}
	return p.Start, nil
}

// bootID is the kernel's id for this boot.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
