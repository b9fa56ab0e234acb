//go:build linux

package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childHidden holds a secret in its environment, hides itself if asked,
// says it is ready, and waits for its stdin to close.
func childHidden() int {
	if os.Getenv("WARDEN_HIDE") == "1" {
		if err := HideSelf(); err != nil {
			return 1
		}
	}
	os.Stdout.WriteString("ready\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// TestHideSelfKeepsTheEnvironmentFromTheUser: a process of the same user
// (the agent's command with the sandbox off, an agent warden only judges
// as its hook) reads a plain process's /proc/PID/environ, but not that of
// one that called HideSelf. As root the test runs both sides as uid
// 65534, since root reads anything.
func TestHideSelfKeepsTheEnvironmentFromTheUser(t *testing.T) {
	exe := hiddenBinary(t)
	for _, hide := range []bool{false, true} {
		pid, stop := startHidden(t, exe, hide)
		reader := exec.Command("/bin/cat", "/proc/"+strconv.Itoa(pid)+"/environ")
		asNobody(reader)
		out, err := reader.CombinedOutput()
		leaked := err == nil && strings.Contains(string(out), "WARDEN_TEST_SECRET=s3cret")
		stop()
		if leaked == hide {
			t.Errorf("hidden=%v: reader got %q (err %v)", hide, out, err)
		}
	}
}

func startHidden(t *testing.T, exe string, hide bool) (int, func()) {
	t.Helper()
	c := exec.Command(exe, "-test.run=^$")
	c.Env = []string{"WARDEN_SANDBOX_TEST_ROLE=hidden", "WARDEN_TEST_SECRET=s3cret", "WARDEN_HIDE=" + map[bool]string{true: "1"}[hide]}
	asNobody(c)
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(outp).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	return c.Process.Pid, func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = c.Process.Kill()
			<-done
		}
	}
}

// hiddenBinary is a copy of the test binary that uid 65534 can run (the
// build directory is the builder's alone).
func hiddenBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil || os.Geteuid() != 0 {
		return exe
	}
	dir, err := os.MkdirTemp("", "warden-hide-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	b, err := os.ReadFile(exe)
	must(t, err)
	bin := filepath.Join(dir, "sandbox.test")
	must(t, os.WriteFile(bin, b, 0o755))
	return bin
}

// asNobody runs c as uid 65534 when the test runs as root.
func asNobody(c *exec.Cmd) {
	if os.Geteuid() == 0 {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}
