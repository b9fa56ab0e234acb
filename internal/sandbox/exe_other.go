//go:build !linux

package sandbox

import (
	"os"
	"syscall"
)

// sysProcAttr starts the helper in a session of its own (no namespaces
// outside Linux).
func sysProcAttr(confine, network bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// selfExe is this binary.
func selfExe() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}
