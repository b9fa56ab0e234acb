//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/store"
)

// TestMain runs the tests; as a "host" child (TestLifeline,
// TestUnprivileged) it runs that role instead.
func TestMain(m *testing.M) {
	switch os.Getenv("WARDEN_SANDBOX_TEST_ROLE") {
	case "host":
		os.Exit(childHost())
	case "unprivileged":
		os.Exit(childUnprivileged())
	case "tty-host":
		os.Exit(childTTYHost())
	case "hidden":
		os.Exit(childHidden())
	}
	goleak.VerifyTestMain(m)
}

// env is a sandbox on a fresh directory tree: a state directory
// (hidden), a workspace (writable) and a config file (hidden).
type env struct {
	root, state, ws, conf string
	s                     *Sandbox
}

func newEnv(t testing.TB, mutate func(*Config)) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{root: root, state: filepath.Join(root, "ws", "state"), ws: filepath.Join(root, "ws"), conf: filepath.Join(root, "ws", "warden.yaml")}
	must(t, os.MkdirAll(e.state, 0o700))
	must(t, os.WriteFile(filepath.Join(e.state, "token"), []byte("s3cret-token"), 0o600))
	must(t, os.WriteFile(e.conf, []byte("approvals:\n  mode: manual\n"), 0o600))
	cfg := Config{
		Mode: WorkspaceWrite, Hide: []string{e.state, e.conf}, Network: true,
		TempRoot: filepath.Join(e.state, "sandbox"), Home: filepath.Join(root, "home"), Spawner: "test",
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(context.Background(), cfg)
	must(t, err)
	if err := s.Err(); err != nil {
		t.Fatalf("sandbox unavailable: %s", s.Status().Why)
	}
	e.s = s
	return e
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sh runs script with /bin/sh in the workspace and returns its combined
// output and error.
func (e *env) sh(t testing.TB, script string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", script}, Dir: e.ws,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + e.root}, Stdout: &out, Stderr: &out})
	if err != nil {
		return "", err
	}
	err = c.Run(t.Context())
	return out.String(), err
}

func TestHiddenPathsDoNotExist(t *testing.T) {
	e := newEnv(t, nil)
	out, err := e.sh(t, `
ls -A state && echo "ls=0" || echo "ls=1"
cat state/token && echo "cat=0" || echo "cat=1"
echo pwned > state/token && echo "write=0" || echo "write=1"
echo pwned > state/new && echo "create=0" || echo "create=1"
cd state && echo pwned > ./token2 && echo "relative=0" || echo "relative=1"; cd ..
cat warden.yaml && echo "conf-read=0" || echo "conf-read=1"
echo "mode: off" > warden.yaml && echo "conf-write=0" || echo "conf-write=1"
cp /dev/null warden.yaml && echo "conf-cp=0" || echo "conf-cp=1"
rm -f warden.yaml && echo "conf-rm=0" || echo "conf-rm=1"
mv state state2 && echo "mv=0" || echo "mv=1"
umount state && echo "umount=0" || echo "umount=1"
umount -l state && echo "umount-lazy=0" || echo "umount-lazy=1"
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ls=0", "write=1", "create=1", "relative=1", "conf-write=1", "conf-cp=1", "conf-rm=1", "mv=1"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "approvals") {
		t.Errorf("hidden content leaked:\n%s", out)
	}
	if strings.Contains(out, "umount=0") || strings.Contains(out, "umount-lazy=0") {
		t.Errorf("a hidden path could be unmounted:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(e.state, "token")); string(b) != "s3cret-token" {
		t.Errorf("token changed: %q", b)
	}
	if b, _ := os.ReadFile(e.conf); string(b) != "approvals:\n  mode: manual\n" {
		t.Errorf("config changed: %q", b)
	}
	for _, p := range []string{"new", "token2"} {
		if _, err := os.Stat(filepath.Join(e.state, p)); err == nil {
			t.Errorf("state/%s was created", p)
		}
	}
}

func TestWritesOnlyInWritableRoots(t *testing.T) {
	extra := t.TempDir()
	e := newEnv(t, func(c *Config) { c.Writable = []string{extra} })
	outside := t.TempDir() // visible to nobody: the host's /tmp is replaced
	out, err := e.sh(t, fmt.Sprintf(`
echo a > ws-file && echo "ws=0" || echo "ws=1"
echo b > %s/extra-file && echo "extra=0" || echo "extra=1"
echo c > /tmp/tmp-file && echo "tmp=0" || echo "tmp=1"; echo "TMPDIR=$TMPDIR"
echo d > /etc/warden-test && echo "etc=0" || echo "etc=1"
echo e > %s/outside && echo "outside=0" || echo "outside=1"
touch /usr/warden-test && echo "usr=0" || echo "usr=1"
`, extra, outside))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ws=0", "extra=0", "tmp=0", "TMPDIR=/tmp", "etc=1", "outside=1", "usr=1"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "ws-file")); string(b) != "a\n" {
		t.Errorf("workspace write not on the host: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(extra, "extra-file")); string(b) != "b\n" {
		t.Errorf("extra root write not on the host: %q", b)
	}
	for _, p := range []string{"/etc/warden-test", "/usr/warden-test", filepath.Join(outside, "outside"), "/tmp/tmp-file"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
			os.Remove(p)
		}
	}
	// The private temporary directory is gone with the call.
	left, _ := os.ReadDir(filepath.Join(e.state, "sandbox"))
	for _, l := range left {
		if strings.HasPrefix(l.Name(), "call-") {
			t.Errorf("temporary directory %s left behind", l.Name())
		}
	}
}

func TestReadOnlyMode(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = ReadOnly })
	out, err := e.sh(t, `echo a > ws-file && echo "ws=0" || echo "ws=1"; echo b > /tmp/x && echo "tmp=0" || echo "tmp=1"; cat /tmp/x`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "ws=1\n") || !strings.Contains(out, "tmp=0\n") || !strings.Contains(out, "b\n") {
		t.Errorf("read-only mode:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ws-file")); err == nil {
		t.Error("read-only mode wrote the workspace")
	}
}

// hostProcs returns the host pids whose command line starts with prefix.
func hostProcs(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		b = bytes.ReplaceAll(b, []byte{0}, []byte{' '})
		if st, ok := readStat(pid); ok && st.state != 'Z' && bytes.HasPrefix(b, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

func TestDetachedProcessesDieWithTheCall(t *testing.T) {
	e := newEnv(t, nil)
	marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%100000)
	out, err := e.sh(t, fmt.Sprintf(`
setsid sleep %[1]s1 </dev/null >/dev/null 2>&1 &
nohup sleep %[1]s2 </dev/null >/dev/null 2>&1 &
( sleep %[1]s3 </dev/null >/dev/null 2>&1 & ) &
sh -c 'sleep %[1]s4 </dev/null >/dev/null 2>&1 &'
sleep 0.2
echo started
`, marker))
	if err != nil || !strings.Contains(out, "started") {
		t.Fatalf("%v\n%s", err, out)
	}
	if left := hostProcs("sleep " + marker); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
}

func TestPIDNamespaceHidesTheHost(t *testing.T) {
	e := newEnv(t, nil)
	host := os.Getpid()
	out, err := e.sh(t, fmt.Sprintf(`
ls /proc | grep -c '^[0-9]' > /tmp/n; echo "procs=$(cat /tmp/n)"
kill -0 %[1]d && echo "kill=0" || echo "kill=1"
cat /proc/%[1]d/environ && echo "environ=0" || echo "environ=1"
cat /proc/1/environ && echo "helper-environ=0" || echo "helper-environ=1"
head -c1 /proc/1/mem && echo "helper-mem=0" || echo "helper-mem=1"
echo "pid=$$"
`, host))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"kill=1", "environ=1", "helper-environ=1", "helper-mem=1"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	var n int
	fmt.Sscanf(out[strings.Index(out, "procs=")+6:], "%d", &n)
	if n == 0 || n > 20 {
		t.Errorf("the call sees %d processes:\n%s", n, out)
	}
}

func TestNetworkOff(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Network = false })
	out, err := e.sh(t, `cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.TrimSpace(out) != "lo" {
		t.Errorf("interfaces with the network off:\n%s", out)
	}
}

func TestGitHooksAndConfigStayReadOnly(t *testing.T) {
	e := newEnv(t, nil)
	must(t, os.MkdirAll(filepath.Join(e.ws, ".git", "objects"), 0o755))
	must(t, os.WriteFile(filepath.Join(e.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	// No hooks directory yet: it must not become a way in either.
	out, err := e.sh(t, `
mkdir -p .git/hooks; echo '#!/bin/sh' > .git/hooks/pre-commit && echo "hook=0" || echo "hook=1"
printf '[core]\n\thooksPath = /tmp\n' >> .git/config && echo "config=0" || echo "config=1"
rm -rf .git/hooks && echo "rm=0" || echo "rm=1"
mv .git/hooks .git/h2 && echo "mv=0" || echo "mv=1"
echo obj > .git/objects/x && echo "objects=0" || echo "objects=1"
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"hook=1", "config=1", "rm=1", "mv=1", "objects=0"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was written")
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

func TestRefusedWorkspaces(t *testing.T) {
	e := newEnv(t, nil)
	for name, sp := range map[string]Spec{
		"root":         {Dir: "/"},
		"home":         {Dir: e.ws, Workspace: e.root}, // holds Home
		"inside state": {Dir: e.state},
	} {
		if name == "home" {
			must(t, os.MkdirAll(filepath.Join(e.root, "home"), 0o700))
		}
		sp.Path = "/bin/true"
		if _, err := e.s.Command(sp); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", name, err)
		}
	}
}

func TestEnvironmentIsTheGivenOne(t *testing.T) {
	e := newEnv(t, nil)
	var out bytes.Buffer
	c, err := e.s.Command(Spec{Path: "/usr/bin/env", Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin", "A=1"}, Stdout: &out})
	must(t, err)
	must(t, c.Run(t.Context()))
	if got := out.String(); got != "PATH=/usr/bin:/bin\nA=1\nTMPDIR=/tmp\n" {
		t.Errorf("environment:\n%s", got)
	}
}

func TestExitStatusAndExtraFiles(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.sh(t, "exit 3"); !isExit(err, 3, 0) {
		t.Errorf("exit 3: %v", err)
	}
	if _, err := e.sh(t, "kill -9 $$"); !isExit(err, -1, 9) {
		t.Errorf("killed: %v", err)
	}
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "echo via-fd3 >&3"}, Dir: e.ws, Env: []string{}, ExtraFiles: []*os.File{w}})
	must(t, err)
	must(t, c.Start(t.Context()))
	w.Close()
	must(t, c.Wait())
	b := make([]byte, 64)
	n, _ := r.Read(b)
	if string(b[:n]) != "via-fd3\n" {
		t.Errorf("fd 3: %q", b[:n])
	}
}

func isExit(err error, code, sig int) bool {
	var x *ExitError
	return errors.As(err, &x) && x.Code == code && x.Signal == sig
}

func TestCancelKillsEverything(t *testing.T) {
	e := newEnv(t, nil)
	marker := fmt.Sprintf("1001.%d", time.Now().UnixNano()%100000)
	ctx, cancel := context.WithCancel(t.Context())
	c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "setsid sleep " + marker + " & sleep " + marker}, Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin"}})
	must(t, err)
	must(t, c.Start(ctx))
	waitUntil(t, "the sleeps to start", func() bool { return len(hostProcs("sleep "+marker)) == 2 })
	cancel()
	if err := c.Wait(); !isExit(err, -1, 9) {
		t.Errorf("cancelled: %v", err)
	}
	if left := hostProcs("sleep " + marker); len(left) > 0 {
		t.Fatalf("left after cancel: %v", left)
	}
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestModeOff(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = Off })
	if st := e.s.Status(); st.Active || st.Refusing || !strings.Contains(st.Why, "off") {
		t.Errorf("status: %+v", st)
	}
	out, err := e.sh(t, "cat state/token; echo; echo $TMPDIR")
	if err != nil || !strings.Contains(out, "s3cret-token") {
		t.Errorf("mode off runs unconfined: %v\n%s", err, out)
	}
}

func TestFailsClosedWhenTheKernelCannot(t *testing.T) {
	root := t.TempDir()
	s, err := New(t.Context(), Config{TempRoot: filepath.Join(root, "t"), Probe: func(context.Context) error {
		return errors.New("clone: operation not permitted")
	}})
	must(t, err)
	st := s.Status()
	if st.Active || !st.Refusing || !strings.Contains(st.Why, "operation not permitted") || !strings.Contains(st.Fix, "warden doctor") {
		t.Errorf("status: %+v", st)
	}
	marker := filepath.Join(root, "ran")
	_, err = s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "touch " + marker}, Dir: root})
	var u *UnavailableError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &u) {
		t.Fatalf("command: %v, want ErrUnavailable", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "warden doctor") || strings.Contains(msg, "mode") || strings.Contains(msg, "off") {
		t.Errorf("agent-facing message names a setting: %q", msg)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// recorder keeps records in memory and notes, at each record, whether
// the command had already run.
type recorder struct {
	mu       sync.Mutex
	recs     map[string]store.Process
	ranEarly bool
	marker   string
	forgot   int
}

func (r *recorder) RecordProcess(_ context.Context, p store.Process) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recs == nil {
		r.recs = map[string]store.Process{}
	}
	if r.marker != "" {
		time.Sleep(50 * time.Millisecond) // the command would have run by now
		if _, err := os.Stat(r.marker); err == nil {
			r.ranEarly = true
		}
	}
	r.recs[p.ID] = p
	return nil
}

func (r *recorder) ForgetProcess(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recs, id)
	r.forgot++
	return nil
}

func (r *recorder) ListProcesses(context.Context) ([]store.Process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []store.Process
	for _, p := range r.recs {
		out = append(out, p)
	}
	return out, nil
}

func TestRecordedBeforeItRuns(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, func(c *Config) { c.Recorder = rec })
	rec.mu.Lock()
	rec.marker, rec.forgot, rec.recs = filepath.Join(e.ws, "ran"), 0, nil
	rec.mu.Unlock()
	c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "touch ran; sleep 30"}, Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin"}, Owner: "cron:x", Run: "cron:r1"})
	must(t, err)
	must(t, c.Start(t.Context()))
	waitUntil(t, "the command to run", func() bool { _, err := os.Stat(rec.marker); return err == nil })
	rec.mu.Lock()
	if rec.ranEarly || len(rec.recs) != 1 {
		t.Errorf("ran before its record: %v; records %v", rec.ranEarly, rec.recs)
	}
	for _, p := range rec.recs {
		if p.PID != c.Pid() || !p.Sandboxed || p.Run != "cron:r1" || p.Owner != "cron:x" || p.Start == 0 || p.SpawnerPID != os.Getpid() {
			t.Errorf("record: %+v", p)
		}
	}
	rec.mu.Unlock()
	c.Kill()
	_ = c.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.recs) != 0 || rec.forgot != 1 {
		t.Errorf("record kept after the end: %v", rec.recs)
	}
}

func TestKillRunFences(t *testing.T) {
	e := newEnv(t, nil)
	marker := fmt.Sprintf("1002.%d", time.Now().UnixNano()%100000)
	c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "sleep " + marker}, Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin"}, Run: "kanban:R1"})
	must(t, err)
	must(t, c.Start(t.Context()))
	waitUntil(t, "the step", func() bool { return len(hostProcs("sleep "+marker)) == 1 })
	errc := make(chan error, 1)
	go func() { errc <- c.Wait() }()
	must(t, e.s.KillRun(t.Context(), "kanban:R1"))
	if left := hostProcs("sleep " + marker); len(left) > 0 {
		t.Errorf("KillRun returned with the step alive: %v", left)
	}
	<-errc
	if _, err := e.s.Command(Spec{Path: "/bin/true", Dir: e.ws, Run: "kanban:R1"}); !errors.Is(err, ErrFenced) {
		t.Errorf("a fenced run started again: %v", err)
	}
}

// deadProcess returns the pid and start time of a process that has
// exited.
func deadProcess(t *testing.T) (int, uint64) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.2")
	must(t, cmd.Start())
	start, err := procStart(cmd.Process.Pid)
	must(t, err)
	must(t, cmd.Wait())
	return cmd.Process.Pid, start
}

func TestFenceKillsWhatADeadSpawnerLeft(t *testing.T) {
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &recorder{}
			e := newEnv(t, func(c *Config) { c.Recorder, c.Mode = rec, mode })
			marker := fmt.Sprintf("1003.%d", time.Now().UnixNano()%100000)
			c, err := e.s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "sleep " + marker + "1 & sleep " + marker + "2"}, Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin"}})
			must(t, err)
			must(t, c.Start(t.Context()))
			errc := make(chan error, 1)
			go func() { errc <- c.Wait() }()
			waitUntil(t, "the sleeps", func() bool { return len(hostProcs("sleep "+marker)) == 2 })
			// Pretend its spawner died: give the record a dead spawner.
			pid, start := deadProcess(t)
			rec.mu.Lock()
			var other store.Process
			for id, p := range rec.recs {
				p.SpawnerPID, p.SpawnerStart = pid, start
				rec.recs[id] = p
			}
			// And a record of a live spawner (this process): kept.
			other = store.Process{ID: "live", SpawnerPID: os.Getpid(), SpawnerStart: e.s.self.start, Boot: bootID(), PID: os.Getpid(), Start: e.s.self.start, Sandboxed: true}
			rec.recs["live"] = other
			rec.mu.Unlock()
			fenced, err := Fence(t.Context(), rec)
			must(t, err)
			if len(fenced) != 1 {
				t.Fatalf("fenced %d records, want 1", len(fenced))
			}
			if left := hostProcs("sleep " + marker); len(left) > 0 {
				t.Fatalf("Fence returned with leftovers alive: %v", left)
			}
			if _, ok := rec.recs["live"]; !ok {
				t.Error("a live spawner's record was fenced")
			}
			<-errc
		})
	}
}

// TestLifeline: when the host dies (SIGKILL, no cleanup), the call and
// everything it started die with it.
func TestLifeline(t *testing.T) {
	marker := fmt.Sprintf("1004.%d", time.Now().UnixNano()%100000)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WARDEN_SANDBOX_TEST_ROLE=host", "WARDEN_SANDBOX_TEST_DIR="+dir, "WARDEN_SANDBOX_TEST_MARKER="+marker)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	waitUntil(t, "the child host's sleeps", func() bool { return len(hostProcs("sleep "+marker)) == 2 })
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	waitUntil(t, "the orphaned call to die", func() bool { return len(hostProcs("sleep "+marker)) == 0 })
}

// childHost starts a sandboxed call and waits to be killed.
func childHost() int {
	dir, marker := os.Getenv("WARDEN_SANDBOX_TEST_DIR"), os.Getenv("WARDEN_SANDBOX_TEST_MARKER")
	s, err := New(context.Background(), Config{TempRoot: filepath.Join(dir, "t"), Hide: []string{filepath.Join(dir, "t")}})
	if err != nil || s.Err() != nil {
		fmt.Fprintln(os.Stderr, err, s.Status().Why)
		return 1
	}
	c, err := s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "setsid sleep " + marker + "1 & sleep " + marker + "2"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}})
	if err == nil {
		err = c.Run(context.Background())
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// TestUnprivileged runs the core checks as an unprivileged user when
// the tests run as root (CI), so the sandbox is known to work without
// root.
func TestUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: the other tests cover it")
	}
	dir, err := os.MkdirTemp("", "warden-unpriv-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(bin, b, 0o755))
	work := filepath.Join(dir, "work")
	must(t, os.Mkdir(work, 0o755))
	must(t, os.Chown(work, 65534, 65534))
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "WARDEN_SANDBOX_TEST_ROLE=unprivileged", "WARDEN_SANDBOX_TEST_DIR=" + work}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// childUnprivileged checks hiding, writable roots and the PID
// namespace as an ordinary user.
func childUnprivileged() int {
	dir := os.Getenv("WARDEN_SANDBOX_TEST_DIR")
	state, ws := filepath.Join(dir, "state"), filepath.Join(dir, "ws")
	if err := errors.Join(os.MkdirAll(state, 0o700), os.MkdirAll(ws, 0o700), os.WriteFile(filepath.Join(state, "token"), []byte("s3cret"), 0o600)); err != nil {
		fmt.Println(err)
		return 1
	}
	s, err := New(context.Background(), Config{TempRoot: filepath.Join(state, "t"), Hide: []string{state}, Network: false})
	if err != nil || s.Err() != nil {
		fmt.Println("sandbox:", err, s.Status().Why, s.Status().Fix)
		return 1
	}
	var out bytes.Buffer
	c, err := s.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "id -u; cat " + state + "/token; echo w > " + ws + "/f && echo ws-ok; echo x > /etc/g || echo outside-refused; kill -0 1 && echo init-visible; ls /proc | grep -c '^[0-9]'"},
		Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: &out, Stderr: &out})
	if err == nil {
		err = c.Run(context.Background())
	}
	fmt.Print(out.String())
	got := out.String()
	if err != nil || !strings.HasPrefix(got, "65534\n") || strings.Contains(got, "s3cret") || !strings.Contains(got, "ws-ok") || !strings.Contains(got, "outside-refused") {
		fmt.Println("FAILED:", err)
		return 1
	}
	return 0
}

// TestAbstractSocketsOfTheHostAreOutOfReach: an abstract unix socket
// (not a file, so no mount hides it) that a host process listens on
// cannot be reached from the sandbox: Landlock's scope where the kernel
// has ABI 6, the network namespace when the network is off.
func TestAbstractSocketsOfTheHostAreOutOfReach(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatal("WARDEN_FULL=1 but python3 is missing")
		}
		t.Skip("python3 is missing")
	}
	name := fmt.Sprintf("warden-test-%d", time.Now().UnixNano())
	ln, err := net.Listen("unix", "@"+name)
	must(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("reached\n"))
			c.Close()
		}
	}()
	probe := `python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
s.connect('\0` + name + `')
print(s.recv(64).decode())
"`
	for _, network := range []bool{true, false} {
		e := newEnv(t, func(c *Config) { c.Network = network })
		if network && e.s.Status().Kernel.LandlockABI < 6 {
			t.Logf("network on: Landlock ABI %d cannot scope abstract sockets; skipped", e.s.Status().Kernel.LandlockABI)
			continue
		}
		out, _ := e.sh(t, probe)
		if strings.Contains(out, "reached") {
			t.Errorf("network %v: the host's abstract socket was reached:\n%s", network, out)
		}
	}
	// The same probe from outside the sandbox does reach it: the test
	// can fail.
	out, err := exec.Command("sh", "-c", probe).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reached") {
		t.Fatalf("unsandboxed probe: %v %s", err, out)
	}
}

// TestNoTerminalInjection: a command cannot push input into the
// terminal of the process that started it (TIOCSTI), which would run
// its text in the operator's shell after warden exits: it runs in a
// session of its own, without a controlling terminal.
func TestNoTerminalInjection(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatal("WARDEN_FULL=1 but python3 is missing")
		}
		t.Skip("python3 is missing")
	}
	if b, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); strings.TrimSpace(string(b)) == "0" {
		t.Skip("this kernel refuses TIOCSTI to everyone (dev.tty.legacy_tiocsti=0): nothing to test")
	}
	master, n := openPTY(t)
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	defer slave.Close()
	result := filepath.Join(t.TempDir(), "result")
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "WARDEN_SANDBOX_TEST_ROLE=tty-host", "WARDEN_SANDBOX_TEST_DIR="+filepath.Dir(result), "WARDEN_SANDBOX_TEST_MODE="+string(mode))
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		go func() { _, _ = io.Copy(io.Discard, master) }() // drain the terminal's output
		must(t, cmd.Run())
		b, _ := os.ReadFile(result)
		got := strings.TrimSpace(string(b))
		if mode == Off && os.Getuid() == 0 {
			// Root outside a user namespace may TIOCSTI any terminal:
			// mode off confines nothing.
			t.Logf("mode off as root: %s", got)
			continue
		}
		if got != "clean" {
			t.Errorf("mode %s: %s", mode, got)
		}
	}
}

// openPTY opens a pseudo-terminal's master (closed when the test ends)
// and returns it with its number (/dev/pts/N).
func openPTY(t *testing.T) (*os.File, int) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	must(t, err)
	t.Cleanup(func() { master.Close() })
	must(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	must(t, err)
	return master, n
}

// childTTYHost has the pty as its controlling terminal, runs a command
// that tries TIOCSTI on it, and reports whether input arrived.
func childTTYHost() int {
	dir, mode := os.Getenv("WARDEN_SANDBOX_TEST_DIR"), Mode(os.Getenv("WARDEN_SANDBOX_TEST_MODE"))
	report := func(s string) int {
		_ = os.WriteFile(filepath.Join(dir, "result"), []byte(s), 0o600)
		return 0
	}
	s, err := New(context.Background(), Config{Mode: mode, TempRoot: filepath.Join(dir, "t"), Hide: []string{filepath.Join(dir, "t")}})
	if err != nil || s.Err() != nil {
		return report(fmt.Sprint("no sandbox: ", err, s.Status().Why))
	}
	c, err := s.Command(Spec{Path: "python3", Args: []string{"-c", "import fcntl, termios\nfor ch in b'INJECTED\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([ch]))"},
		Dir: dir, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stdout})
	if err != nil {
		return report(err.Error())
	}
	_ = c.Run(context.Background())
	// Whatever was injected waits in the terminal's input queue.
	if err := syscall.SetNonblock(0, true); err != nil {
		return report(err.Error())
	}
	buf := make([]byte, 64)
	n, _ := syscall.Read(0, buf)
	if n > 0 {
		return report(fmt.Sprintf("injected %q", buf[:n]))
	}
	return report("clean")
}

// TestSessionKeyringIsNotInherited: a key in the host's session keyring
// (possessed by the host, so readable by it) cannot be read from the
// sandbox, which starts with an empty session keyring of its own.
func TestSessionKeyringIsNotInherited(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe calls keyctl by its amd64 number")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatal("WARDEN_FULL=1 but python3 is missing")
		}
		t.Skip("python3 is missing")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	secret := fmt.Sprintf("keyring-secret-%d", time.Now().UnixNano())
	id, err := unix.AddKey("user", "warden-test", []byte(secret), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Skipf("no session keyring here: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	probe := fmt.Sprintf(`python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
n = libc.syscall(250, 11, %d, buf, 256)
print(buf.raw[:n].decode() if n > 0 else 'refused')
"`, id)
	// From outside, as the sandbox's parent would see it: readable.
	out, err := exec.Command("sh", "-c", probe).CombinedOutput()
	if err != nil || !strings.Contains(string(out), secret) {
		t.Fatalf("unsandboxed probe: %v %s", err, out)
	}
	e := newEnv(t, nil)
	got, _ := e.sh(t, probe)
	if strings.Contains(got, secret) {
		t.Errorf("the host's session key was read in the sandbox: %s", got)
	}
}

// TestSysVIPCOfTheHostIsOutOfReach: a System V shared memory segment
// the host's user created is not visible in the sandbox (its own IPC
// namespace).
func TestSysVIPCOfTheHostIsOutOfReach(t *testing.T) {
	key := int(time.Now().UnixNano()&0x7fffffff) | 1
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Skipf("no System V shared memory here: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	listed := func(table string) bool {
		for _, l := range strings.Split(table, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == strconv.Itoa(key) {
				return true
			}
		}
		return false
	}
	if b, err := os.ReadFile("/proc/sysvipc/shm"); err != nil || !listed(string(b)) {
		t.Fatalf("the segment is not listed outside the sandbox: %v", err)
	}
	e := newEnv(t, nil)
	out, err := e.sh(t, "cat /proc/sysvipc/shm")
	if err != nil || listed(out) {
		t.Errorf("the host's segment is visible in the sandbox: %v\n%s", err, out)
	}
}

// TestOwnDevAndGuardedProc: a call has a /dev of its own (the harmless
// devices, its own pseudo-terminals: none of the host's disks or the
// user's terminals) and a /proc whose sysctls, sysrq trigger and kernel
// memory are out of reach — which matters when warden runs as root,
// whose commands are root too.
func TestOwnDevAndGuardedProc(t *testing.T) {
	_, n := openPTY(t)
	hostPTY := fmt.Sprintf("/dev/pts/%d", n)
	e := newEnv(t, nil)
	// Only opens for writing (":" writes nothing): were the guard gone,
	// nothing on this machine would change.
	out, err := e.sh(t, `
ls /dev | tr '\n' ' '; echo
echo x > /dev/null && echo null-ok
head -c 4 /dev/urandom | wc -c
test -e `+hostPTY+` && echo host-pty-visible
ls /dev/pts | tr '\n' ' '; echo
( : >> /proc/sys/kernel/core_pattern ) 2>/dev/null && echo core_pattern-writable
( : >> /proc/sysrq-trigger ) 2>/dev/null && echo sysrq-writable
test -s /proc/kcore && echo kcore-readable
head -c 1 /proc/kallsyms | grep -q . && echo kallsyms-readable
true
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(out, "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}) {
		t.Errorf("/dev holds %v", got)
	}
	for _, bad := range []string{"host-pty-visible", "writable", "readable"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "null-ok") || !strings.Contains(out, "4\n") {
		t.Errorf("devices do not work:\n%s", out)
	}
}

// TestTableFloorsStayReadOnly: what the protected-path table never lets
// a writer touch stays read-only inside writable roots — in the
// workspace (.env, other agents' settings) and in a home directory made
// writable by the configuration (start-up files, ~/.ssh, ~/.local/bin) —
// while the rest of those roots is writable.
func TestTableFloorsStayReadOnly(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, func(c *Config) { c.Home, c.Writable = home, []string{home} })
	files := map[string]string{
		filepath.Join(e.ws, ".env"):                          "SECRET=1\n",
		filepath.Join(e.ws, ".env.example"):                  "SECRET=\n",
		filepath.Join(e.ws, ".claude", "settings.json"):      "{}\n",
		filepath.Join(e.ws, ".mcp.json"):                     "{}\n",
		filepath.Join(home, ".bashrc"):                       "# rc\n",
		filepath.Join(home, ".ssh", "authorized_keys"):       "",
		filepath.Join(home, ".local", "bin", "placeholder"):  "",
		filepath.Join(home, ".config", "autostart", "x.txt"): "",
	}
	for p, body := range files {
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	out, err := e.sh(t, fmt.Sprintf(`
H=%s
w() { ( echo pwned >> "$1" ) 2>/dev/null && echo "wrote $2"; }
w .env env; w .env.example env-example; w .claude/settings.json claude; w .mcp.json mcp
w "$H/.bashrc" bashrc; w "$H/.ssh/authorized_keys" ssh; w "$H/.local/bin/ls" local-bin; w "$H/.config/autostart/evil.desktop" autostart
w "$H/notes.txt" home-notes
true`, home))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"wrote env-example", "wrote home-notes"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"wrote env\n", "claude", "mcp", "bashrc", "ssh", "local-bin", "autostart"} {
		if strings.Contains(out, "wrote "+strings.TrimPrefix(bad, "wrote ")) {
			t.Errorf("a floor was written (%s):\n%s", bad, out)
		}
	}
	for p, body := range files {
		if strings.HasSuffix(p, ".env.example") {
			continue
		}
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Errorf("%s changed: %q", p, b)
		}
	}
}

// TestSeatbeltHidesSockets: on macOS a unix-socket connect is a network
// operation, so hiding the state directory from file reads is not enough;
// the profile must also deny connects to sockets under every hidden path,
// after (so over) the network allowance, with the network on or off.
func TestSeatbeltHidesSockets(t *testing.T) {
	for _, network := range []bool{true, false} {
		p := seatbeltProfile([]string{"/w"}, []string{"/state", "/conf"}, nil, network)
		for _, h := range []string{"/state", "/conf"} {
			deny := `(deny network-outbound (remote unix-socket (subpath "` + h + `")))`
			i := strings.Index(p, deny)
			if i < 0 {
				t.Fatalf("network=%v: profile lacks %s:\n%s", network, deny, p)
			}
			if j := strings.LastIndex(p, "(allow network*"); j > i {
				t.Errorf("network=%v: an allow follows the deny of %s:\n%s", network, h, p)
			}
		}
	}
}
