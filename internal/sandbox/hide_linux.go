package sandbox

import "golang.org/x/sys/unix"

// HideSelf makes this process non-dumpable: processes of the same user
// without CAP_SYS_PTRACE — an agent's commands when the sandbox is off,
// an external agent warden only judges as its hook — cannot trace it,
// read its /proc/PID/environ or mem, or open its descriptors. Warden's
// processes hold what an agent must not borrow (the model's key, the
// admin credential); the analyser's rules about /proc and debuggers are
// defence in depth on top of this. It also turns off core dumps, which
// would write the same secrets to disk.
func HideSelf() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
