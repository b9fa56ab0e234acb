package ancestry

import (
	"os"
	"testing"
)

// TestOutside: on macOS a running process is "outside" as far as the
// kernel can tell (no namespaces); a pid that does not exist is not.
func TestOutside(t *testing.T) {
	b := Boundary{Host: os.Getpid()}
	child, _ := start(t, `echo up; sleep 30`)
	for _, pid := range []int{os.Getpid(), child.Process.Pid} {
		o, err := b.Outside(pid, false)
		if err != nil || !o.Seatbelt {
			t.Errorf("Outside(%d) = %+v, %v", pid, o, err)
		}
	}
	if _, err := b.Outside(99999+12345, false); err == nil {
		t.Error("a pid that does not exist was proven outside")
	}
	if _, err := (Boundary{}).Outside(os.Getpid(), false); err == nil {
		t.Error("a boundary without a host proved something")
	}
}
