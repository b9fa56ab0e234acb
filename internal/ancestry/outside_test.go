//go:build linux || darwin

package ancestry

import (
	"os"
	"runtime"
	"testing"
)

// TestOutside: the host's own process and a child of it are outside
// every sandbox; a pid that does not exist is not. On Linux the proof is
// the host's namespaces (what a sandbox is refused for is shown in
// internal/localapi, where real namespaces are made); on macOS, which
// has no namespaces, a running process is "outside" as far as the
// kernel can tell.
func TestOutside(t *testing.T) {
	proven := func(o Outside) bool { return o.Inodes && o.PIDDepth >= 1 }
	absent := 1<<22 + 12345 // above Linux's largest pid_max
	if runtime.GOOS == "darwin" {
		proven = func(o Outside) bool { return o.Seatbelt }
		absent = 99999 + 12345 // above macOS's largest pid
	}
	b := Boundary{Host: os.Getpid()}
	child, _ := start(t, `echo up; sleep 30`)
	for _, pid := range []int{os.Getpid(), child.Process.Pid} {
		o, err := b.Outside(pid, false)
		if err != nil || !proven(o) {
			t.Errorf("Outside(%d) = %+v, %v", pid, o, err)
		}
	}
	if _, err := b.Outside(absent, false); err == nil {
		t.Error("a pid that does not exist was proven outside")
	}
	if _, err := (Boundary{}).Outside(os.Getpid(), false); err == nil {
		t.Error("a boundary without a host proved something")
	}
}
