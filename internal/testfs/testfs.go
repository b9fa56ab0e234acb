// Package testfs gives tests a small file system of their own, to fill
// up: a tmpfs mounted for the test. Mounting needs root (or
// CAP_SYS_ADMIN); elsewhere the test is skipped with the reason, and
// under WARDEN_FULL=1 it fails instead.
package testfs

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new directory and unmounts it
// when the test ends.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		unavailable(t, "tmpfs mounts need Linux")
	}
	mount, err := exec.LookPath("mount")
	if err != nil {
		unavailable(t, "no mount command: "+err.Error())
	}
	umount, err := exec.LookPath("umount")
	if err != nil {
		unavailable(t, "no umount command: "+err.Error())
	}
	dir := t.TempDir()
	cmd := exec.Command(mount, "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, fmt.Sprintf("cannot mount a tmpfs (needs root): %v: %s", err, out))
	}
	t.Cleanup(func() {
		cmd := exec.Command(umount, "-l", dir)
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("WARDEN_FULL") == "1" {
		t.Fatalf("WARDEN_FULL=1 but %s", why)
	}
	t.Skipf("%s; set WARDEN_FULL=1 to make this a failure", why)
}
