package ancestry

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses, as a process can name
	// itself anything.
	line := "4242 (a) (b c) S 17 4242 4000 34816 4242 4194304 100 0 0 0 1 2 0 0 20 0 1 0 987654 1234 56 18446744073709551615\n"
	p, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := Proc{PID: 4242, PPID: 17, PGID: 4242, SID: 4000, Comm: "a) (b c", Start: 987654}
	if p != want {
		t.Errorf("parseStat = %+v, want %+v", p, want)
	}
	for _, bad := range []string{"", "4242 no parens", "x (c) S 1 2 3", "4242 (c) S 1 2"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

// fakeProc writes a /proc with the given (pid, ppid, pgid) rows.
func fakeProc(t *testing.T, rows ...[3]int) FS {
	t.Helper()
	root := t.TempDir()
	for _, r := range rows {
		dir := filepath.Join(root, strconv.Itoa(r[0]))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := strconv.Itoa(r[0]) + " (p" + strconv.Itoa(r[0]) + ") S " + strconv.Itoa(r[1]) + " " + strconv.Itoa(r[2]) + " 1 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return FS{Root: root}
}

func TestBoundaryOnAFakeProc(t *testing.T) {
	// 1 init; 50 the operator's shell; 100 the host; 200 a worker (its
	// own group); 300 a tool run's shell; 301 a command of it; 400 an
	// orphan that left 200's chain but kept its group; 60 the
	// operator's warden CLI.
	fs := fakeProc(t,
		[3]int{1, 0, 1}, [3]int{50, 1, 50}, [3]int{100, 50, 50},
		[3]int{200, 100, 200}, [3]int{300, 100, 300}, [3]int{301, 300, 300},
		[3]int{400, 1, 200}, [3]int{60, 50, 60},
	)
	groups := &Groups{}
	groups.Add(200)
	b := Boundary{Host: 100, Groups: groups, FS: fs}
	for _, tc := range []struct {
		pid     int
		refused bool
	}{
		{100, false}, // the host itself (an in-process client)
		{60, false},  // the operator's CLI
		{50, false},
		{1, false},
		{200, true}, // a worker
		{300, true}, // a tool run
		{301, true}, // its child
		{400, true}, // the orphan, by its group
		{999, true}, // unreadable: fail closed
	} {
		err := b.Check(tc.pid)
		if tc.refused != (err != nil) {
			t.Errorf("Check(%d) = %v, want refused %v", tc.pid, err, tc.refused)
		}
		if tc.refused && tc.pid != 999 && !errors.Is(err, ErrAgentProcess) {
			t.Errorf("Check(%d) = %v, want ErrAgentProcess", tc.pid, err)
		}
	}
	if err := b.Check(301); err == nil || !strings.Contains(err.Error(), "p301[301] < p300[300] < p100[100]") {
		t.Errorf("Check(301) = %v, want the chain named", err)
	}
	groups.Remove(200)
	if err := b.Check(400); err != nil {
		t.Errorf("after the group was removed, the orphan: %v (nothing else ties it to the host)", err)
	}
	if err := (Boundary{FS: fs}).Check(60); err == nil {
		t.Error("a Boundary without a host pid admitted a peer")
	}
	// A cycle in a broken /proc ends at maxDepth, refused.
	loop := fakeProc(t, [3]int{7, 8, 7}, [3]int{8, 7, 8})
	if err := (Boundary{Host: 100, FS: loop}).Check(7); err == nil {
		t.Error("a parent cycle was admitted")
	}
}

// start runs sh -c script in its own process group with an empty
// environment and returns it and the first line it prints. The group is
// killed at cleanup.
func start(t *testing.T, script string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return cmd, strings.TrimSpace(line)
}

func TestBoundaryOnRealProcesses(t *testing.T) {
	if _, err := (FS{}).Stat(os.Getpid()); err != nil {
		t.Skipf("this system's processes cannot be read: %v", err)
	}
	host := os.Getpid()
	groups := &Groups{}
	b := Boundary{Host: host, Groups: groups}

	// A child and a grandchild of the "host" (this test process).
	child, grandchild := start(t, `sleep 30 & echo $!; wait`)
	gc, _ := strconv.Atoi(grandchild)
	for _, pid := range []int{child.Process.Pid, gc} {
		if err := b.Check(pid); !errors.Is(err, ErrAgentProcess) {
			t.Errorf("Check(%d) = %v, want ErrAgentProcess", pid, err)
		}
		if in, err := b.FS.Within(pid, host); err != nil || !in {
			t.Errorf("Within(%d, host) = %v, %v", pid, in, err)
		}
	}
	if err := b.Check(host); err != nil {
		t.Errorf("the host itself: %v", err)
	}
	if err := b.Check(1); err != nil {
		t.Errorf("init: %v", err)
	}

	// A double fork leaves the parent chain but keeps the group: only
	// Groups catches it.
	leader, orphan := start(t, `sh -c 'sleep 30 >/dev/null 2>&1 & echo $!'; sleep 30`)
	op, _ := strconv.Atoi(orphan)
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := b.FS.Stat(op)
		if err != nil {
			t.Fatal(err)
		}
		if p.PPID != leader.Process.Pid {
			break // re-parented
		}
		if time.Now().After(deadline) {
			t.Fatal("the orphan was never re-parented")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if in, _ := b.FS.Within(op, host); in {
		t.Skip("this system re-parents orphans under the test process (a subreaper); nothing to show")
	}
	if err := b.Check(op); err != nil {
		t.Fatalf("without its group registered the orphan looks like anyone: %v", err)
	}
	groups.Add(leader.Process.Pid)
	defer groups.Remove(leader.Process.Pid)
	if err := b.Check(op); !errors.Is(err, ErrAgentProcess) {
		t.Errorf("orphan in a registered group: %v, want ErrAgentProcess", err)
	}
}

// accepted returns the server side of a unix socket connection this
// process made to itself.
func accepted(t *testing.T) *net.UnixConn {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*net.UnixConn)
}

func TestPeerCred(t *testing.T) {
	cred, err := PeerCred(accepted(t))
	if err != nil {
		t.Fatal(err)
	}
	if cred.PID != os.Getpid() || cred.UID != os.Getuid() || cred.GID != os.Getgid() {
		t.Errorf("PeerCred = %+v, want this process (pid %d uid %d gid %d)", cred, os.Getpid(), os.Getuid(), os.Getgid())
	}
}

func TestPeerPidfd(t *testing.T) {
	pf, err := PeerPidfd(accepted(t))
	if errors.Is(err, ErrNoPidfd) && (runtime.GOOS != "linux" || os.Getenv("WARDEN_FULL") != "1") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if err := pf.Alive(); err != nil {
		t.Errorf("this process is not alive: %v", err)
	}
}
