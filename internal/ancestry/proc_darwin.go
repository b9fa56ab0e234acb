package ancestry

import (
	"errors"
	"fmt"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statSystem reads a process of the running system from the kernel's
// process table: sysctl kern.proc.pid.PID, one struct kinfo_proc, which
// any user may read for any process.
func statSystem(pid int) (Proc, error) {
	b, err := unix.SysctlRaw("kern.proc.pid", pid)
	if err != nil {
		return Proc{}, fmt.Errorf("stat process %d: sysctl kern.proc.pid: %w", pid, err)
	}
	p, err := parseKinfoProc(b)
	switch {
	case errors.Is(err, errNoProcess):
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, fs.ErrNotExist)
	case err != nil:
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, err)
	case p.PID != pid:
		return Proc{}, fmt.Errorf("stat process %d: the kernel named pid %d", pid, p.PID)
	}
	return p, nil
}

// The offsets darwin.go parses are x/sys's: this does not compile if
// one differs (a negative constant, or an index out of range).
func _() {
	var k unix.KinfoProc
	var x [1]struct{}
	const eproc = unsafe.Offsetof(k.Eproc)
	_ = x[unsafe.Sizeof(k)-kinfoSize]
	_ = x[kinfoSize-unsafe.Sizeof(k)]
	_ = x[unsafe.Offsetof(k.Proc.P_starttime)-kinfoStartSec]
	_ = x[kinfoStartSec-unsafe.Offsetof(k.Proc.P_starttime)]
	_ = x[unsafe.Offsetof(k.Proc.P_starttime.Usec)-kinfoStartUsec]
	_ = x[kinfoStartUsec-unsafe.Offsetof(k.Proc.P_starttime.Usec)]
	_ = x[unsafe.Offsetof(k.Proc.P_stat)-kinfoStat]
	_ = x[kinfoStat-unsafe.Offsetof(k.Proc.P_stat)]
	_ = x[unsafe.Offsetof(k.Proc.P_pid)-kinfoPID]
	_ = x[kinfoPID-unsafe.Offsetof(k.Proc.P_pid)]
	_ = x[unsafe.Offsetof(k.Proc.P_comm)-kinfoComm]
	_ = x[kinfoComm-unsafe.Offsetof(k.Proc.P_comm)]
	_ = x[unsafe.Sizeof(k.Proc.P_comm)-kinfoCommLen]
	_ = x[kinfoCommLen-unsafe.Sizeof(k.Proc.P_comm)]
	_ = x[eproc+unsafe.Offsetof(k.Eproc.Ppid)-kinfoPPID]
	_ = x[kinfoPPID-eproc-unsafe.Offsetof(k.Eproc.Ppid)]
	_ = x[eproc+unsafe.Offsetof(k.Eproc.Pgid)-kinfoPGID]
	_ = x[kinfoPGID-eproc-unsafe.Offsetof(k.Eproc.Pgid)]
}
