package ancestry

// The pure half of the macOS readers: the kernel's structures as bytes,
// parsed here so that they are tested on every system (darwin_test.go);
// proc_darwin.go and peercred_darwin.go fetch the bytes and check at
// compile time that these offsets are golang.org/x/sys/unix's.
//
// Both macOS architectures (arm64, amd64) are LP64 and little-endian,
// and their structures have the same layout.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// struct kinfo_proc (sys/sysctl.h): an extern_proc kp_proc followed by
// an eproc kp_eproc. Only the fields this package reads are named.
const (
	kinfoSize      = 648
	kinfoStartSec  = 0   // kp_proc.p_starttime.tv_sec, int64
	kinfoStartUsec = 8   // kp_proc.p_starttime.tv_usec, int32
	kinfoStat      = 36  // kp_proc.p_stat, int8
	kinfoPID       = 40  // kp_proc.p_pid, int32
	kinfoComm      = 243 // kp_proc.p_comm, [MAXCOMLEN+1]byte
	kinfoCommLen   = 17
	kinfoPPID      = 560 // kp_eproc.e_ppid, int32
	kinfoPGID      = 564 // kp_eproc.e_pgid, int32
)

// sZomb is p_stat of a process that exited and was not yet reaped.
const sZomb = 5

// errNoProcess: the kernel has no process with the pid asked for (its
// sysctl answers with no bytes rather than an error).
var errNoProcess = errors.New("no such process")

// parseKinfoProc reads one struct kinfo_proc as sysctl kern.proc.pid
// returns it. A zombie is reported as gone: it runs nothing, and its pid
// may be about to name another process.
func parseKinfoProc(b []byte) (Proc, error) {
	switch {
	case len(b) == 0:
		return Proc{}, errNoProcess
	case len(b) != kinfoSize:
		return Proc{}, fmt.Errorf("malformed kinfo_proc: %d bytes, want %d", len(b), kinfoSize)
	}
	le := binary.LittleEndian
	i32 := func(off int) int { return int(int32(le.Uint32(b[off:]))) }
	p := Proc{PID: i32(kinfoPID), PPID: i32(kinfoPPID), PGID: i32(kinfoPGID)}
	if p.PID <= 0 || p.PPID < 0 || p.PGID < 0 {
		return Proc{}, fmt.Errorf("malformed kinfo_proc: pid %d, ppid %d, pgid %d", p.PID, p.PPID, p.PGID)
	}
	if int8(b[kinfoStat]) == sZomb {
		return Proc{}, fmt.Errorf("process %d: %w (a zombie)", p.PID, errNoProcess)
	}
	comm := b[kinfoComm : kinfoComm+kinfoCommLen]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	p.Comm = string(comm)
	sec, usec := int64(le.Uint64(b[kinfoStartSec:])), int64(int32(le.Uint32(b[kinfoStartUsec:])))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return Proc{}, fmt.Errorf("malformed kinfo_proc: start time %d.%06d", sec, usec)
	}
	p.Start = uint64(sec)*1e6 + uint64(usec)
	return p, nil
}

// struct xucred (sys/ucred.h), as getsockopt LOCAL_PEERCRED fills it.
const (
	xucredSize    = 76
	xucredVersion = 0 // XUCRED_VERSION
	xucredUID     = 4
	xucredNgroups = 8
	xucredGroups  = 12
	xucredMaxGrp  = 16 // NGROUPS
)

// parseXucred reads a struct xucred and the pid LOCAL_PEERPID gave for
// the same connection. The effective gid is cr_groups[0]; a structure of
// another version, or without groups, is refused rather than guessed at.
func parseXucred(b []byte, pid int32) (Cred, error) {
	if len(b) != xucredSize {
		return Cred{}, fmt.Errorf("malformed xucred: %d bytes, want %d", len(b), xucredSize)
	}
	le := binary.LittleEndian
	if v := le.Uint32(b); v != xucredVersion {
		return Cred{}, fmt.Errorf("xucred version %d, want %d", v, xucredVersion)
	}
	n := int16(le.Uint16(b[xucredNgroups:]))
	if n < 1 || n > xucredMaxGrp {
		return Cred{}, fmt.Errorf("malformed xucred: %d groups", n)
	}
	if pid <= 0 {
		return Cred{}, fmt.Errorf("LOCAL_PEERPID gave pid %d", pid)
	}
	return Cred{
		PID: int(pid),
		UID: int(le.Uint32(b[xucredUID:])),
		GID: int(le.Uint32(b[xucredGroups:])),
	}, nil
}
