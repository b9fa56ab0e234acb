package host

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// buildWarden builds the warden binary into a temp directory. Without a
// go toolchain the test is skipped, unless WARDEN_FULL=1, where it
// fails.
func buildWarden(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatalf("WARDEN_FULL=1 but no go toolchain to build warden: %v", err)
		}
		t.Skipf("no go toolchain to build the warden binary (%v); set WARDEN_FULL=1 to make this a failure", err)
	}
	bin := filepath.Join(t.TempDir(), "warden")
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-o", bin, "github.com/wardenhq/warden/cmd/warden")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build warden: %v\n%s", err, out)
	}
	return bin
}

// proc is a warden subprocess in its own process group, its output in
// a file.
type proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProc(t testing.TB, env []string, dir, log string, bin string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// serveProc starts `warden serve` (host n) on state with conf and
// scratch, in root, and waits until its admin socket answers.
func serveProc(t *testing.T, bin string, env []string, root, state, conf, scratch, n string) (*proc, *localapi.Client) {
	t.Helper()
	p := startProc(t, env, root, filepath.Join(root, "serve-"+n+".log"), bin,
		"serve", "--state", state, "--config", conf, "--scratch", scratch, "--addr", "127.0.0.1:0")
	return p, serving(t, p, state, n)
}

// serving waits until the admin socket of host n (process p, on state)
// answers, failing if p exits first, and returns a client of it.
func serving(t *testing.T, p *proc, state, n string) *localapi.Client {
	t.Helper()
	c := localapi.NewClient(filepath.Join(state, localapi.SocketName))
	t.Cleanup(c.Close)
	waitFor(t, "host "+n+" to serve", func() bool {
		select {
		case <-p.done:
			t.Fatalf("host %s exited: %v\n%s", n, p.err, p.output())
		default:
		}
		_, err := c.Approvals(t.Context())
		return err == nil
	})
	return c
}

// hostEnv is the environment of warden subprocesses whose home is home.
func hostEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
}

// writeFile writes text to path.
func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the process to exit, failing after d.
func (p *proc) wait(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v; its output:\n%s", p.cmd.Args, d, p.output())
	}
	return nil
}

func (p *proc) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// waitFor polls cond every 20ms until it holds, failing after 30s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// killGroupsIn kills the process groups whose leaders' pids are listed,
// one a line, in file (the task step writes its shell's pid there; the
// terminal tool makes that shell a group leader).
func killGroupsIn(file string) {
	b, _ := os.ReadFile(file)
	for line := range strings.SplitSeq(string(b), "\n") {
		if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 1 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// TestStory4_CrashSafety is issue 5's end-to-end story 4 with a real
// `warden serve` process: kill -9 the host while a kanban worker runs
// a step and a web session's `warden exec` waits on a pending request;
// restart it on the same state directory. Then the task is reclaimed
// (the dead host's run failed, the task claimed again), the request is
// withdrawn with the reason "host restarted", and `warden audit verify`
// passes.
func TestStory4_CrashSafety(t *testing.T) {
	if testing.Short() && os.Getenv("WARDEN_FULL") != "1" {
		t.Skip("builds and runs the warden binary; not in -short")
	}
	bin := buildWarden(t)
	root := t.TempDir()
	state, scratch, home := filepath.Join(root, "state"), filepath.Join(root, "scratch"), filepath.Join(root, "home")
	conf := filepath.Join(root, "config.yaml")
	work, taskDir := filepath.Join(root, "work"), filepath.Join(root, "task")
	mkdir(t, home, filepath.Join(work, "y"), taskDir)
	writeFile(t, conf, "approvals:\n  mode: manual\n  timeout: 600\n  kanban_mode: approve\n")
	env := hostEnv(home)
	pids := filepath.Join(taskDir, "step.pids")
	t.Cleanup(func() { killGroupsIn(pids) }) // the dead host's orphaned step, whatever happens

	serve := func(n string) (*proc, *localapi.Client) {
		return serveProc(t, bin, env, root, state, conf, scratch, n)
	}
	cli := func(args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Env, cmd.Dir = env, work
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	ctx := t.Context()

	// Host 1: a task whose step runs long, and a pending request.
	host1, c1 := serve("1")
	task, err := c1.AddKanbanTask(ctx, localapi.KanbanAddRequest{
		Title: "long", Workspace: "dir:" + taskDir, Steps: []string{"echo $$ >> step.pids && sleep 30"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var run1 store.TaskRun
	waitFor(t, "the worker's step to run", func() bool {
		card, err := c1.KanbanTask(ctx, task.ID)
		if err != nil || card.Status != store.TaskRunning || len(card.Runs) == 0 || card.Runs[0].PID <= 0 {
			return false
		}
		run1 = card.Runs[0]
		b, _ := os.ReadFile(pids)
		return len(strings.TrimSpace(string(b))) > 0
	})
	t.Cleanup(func() { _ = syscall.Kill(-run1.PID, syscall.SIGKILL) }) // the dead host's worker, if it lingers

	ex := startProc(t, env, work, filepath.Join(root, "exec.log"), bin, "exec", "--session", "s", "--state", state, "--", "rm -rf ./y")
	var reqID string
	waitFor(t, "the exec's request to be pending", func() bool {
		list, err := c1.Approvals(ctx)
		if err != nil || len(list) != 1 {
			return false
		}
		reqID = list[0].ID
		return list[0].Session == "s"
	})
	out, err := cli("approvals", "list", "--json", "--state", state)
	if err != nil || !strings.Contains(out, `"id": "`+reqID+`"`) {
		t.Fatalf("warden approvals list before the crash: %v\n%s", err, out)
	}

	// The crash. Reap the host, as init would: a zombie still answers
	// kill(pid, 0).
	if err := syscall.Kill(host1.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := host1.wait(t, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("host 1: %v, want killed", err)
	}
	// The exec loses its host and gives up without running anything.
	if err := ex.wait(t, 10*time.Second); err == nil {
		t.Fatalf("warden exec exited 0 after its host died:\n%s", ex.output())
	}
	if _, err := os.Stat(filepath.Join(work, "y")); err != nil {
		t.Fatalf("the pending command ran: %v", err)
	}
	// The worker loses its host too.
	waitFor(t, "the dead host's worker to exit", func() bool {
		return syscall.Kill(run1.PID, 0) != nil
	})

	// Host 2 on the same state directory.
	host2, c2 := serve("2")
	if out := host2.output(); !strings.Contains(out, "recovered: withdrew 1 request(s) left pending by an earlier run (host restarted)") {
		t.Errorf("host 2's banner does not report the withdrawn request:\n%s", out)
	}

	// The task is reclaimed: the dead host's run failed, and the task
	// runs again in a new run.
	var card2 struct {
		Status store.TaskStatus `json:"status"`
		Runs   []store.TaskRun  `json:"runs"`
	}
	waitFor(t, "the task to run again", func() bool {
		out, err := cli("kanban", "show", task.ID, "--json", "--state", state)
		if err != nil || json.Unmarshal([]byte(out), &card2) != nil {
			return false
		}
		return card2.Status == store.TaskRunning && len(card2.Runs) == 2 && card2.Runs[0].PID > 0
	})
	old := card2.Runs[1]
	if old.ID != run1.ID || old.Status != store.TaskRunFailed || !strings.Contains(old.Error, "host restarted") {
		t.Errorf("the dead host's run: %s %s %q, want %s failed (host restarted)", old.ID, old.Status, old.Error, run1.ID)
	}
	if card2.Runs[0].ID == run1.ID || card2.Runs[0].Status != store.TaskRunRunning {
		t.Errorf("the new run: %+v", card2.Runs[0])
	}

	// The request is no longer pending anywhere...
	if list, err := c2.Approvals(ctx); err != nil || len(list) != 0 {
		t.Errorf("pending after restart: %+v %v", list, err)
	}
	if out, err := cli("approvals", "list", "--state", state); err != nil || strings.Contains(out, reqID) {
		t.Errorf("warden approvals list after restart: %v\n%s", err, out)
	}
	// ...and the audit chain verifies.
	if out, err := cli("audit", "verify", "--state", state); err != nil {
		t.Errorf("warden audit verify: %v\n%s", err, out)
	}

	// A clean stop; then the store says how the request ended.
	if err := host2.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := host2.wait(t, 15*time.Second); err != nil {
		t.Fatalf("host 2 stop: %v\n%s", err, host2.output())
	}
	db, err := sqlite.Open(ctx, filepath.Join(state, DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.GetRequest(ctx, reqID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.Withdrawn || r.Reason != "host restarted" {
		t.Errorf("request %s: %s (%s), want withdrawn (host restarted)", reqID, r.State, r.Reason)
	}
	if _, err := os.Stat(filepath.Join(work, "y")); err != nil {
		t.Errorf("the withdrawn command ran: %v", err)
	}
	if t.Failed() {
		t.Logf("host 1:\n%s\nhost 2:\n%s\nexec:\n%s", host1.output(), host2.output(), ex.output())
	}
}
