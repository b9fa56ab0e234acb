package ancestry

import (
	"os"
	"testing"
)

// TestOutside: the host's own process and a child in its namespaces are
// outside every sandbox (what a sandbox is refused for is shown in
// internal/localapi, where real namespaces are made).
func TestOutside(t *testing.T) {
	b := Boundary{Host: os.Getpid()}
	child, _ := start(t, `echo up; sleep 30`)
	for _, pid := range []int{os.Getpid(), child.Process.Pid} {
		o, err := b.Outside(pid, false)
		if err != nil || !o.Inodes || o.PIDDepth < 1 {
			t.Errorf("Outside(%d) = %+v, %v", pid, o, err)
		}
	}
	if _, err := b.Outside(1<<22+12345, false); err == nil {
		t.Error("a pid that does not exist was proven outside")
	}
	if _, err := (Boundary{}).Outside(os.Getpid(), false); err == nil {
		t.Error("a boundary without a host proved something")
	}
}
