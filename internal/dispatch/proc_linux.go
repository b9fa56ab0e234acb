package dispatch

import "golang.org/x/sys/unix"

// undumpable makes this process non-dumpable: processes of the same user
// without CAP_SYS_PTRACE (its steps) cannot trace it or open its
// /proc/PID/mem and fds.
func undumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
