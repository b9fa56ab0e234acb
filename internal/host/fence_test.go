package host

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// fenceStep is a kanban or cron step that tells its attempts apart: each
// attempt appends "start ID" to markers; the first one (no "attempted"
// file yet) then leaves a ticker behind ("tick ID" every 50 ms) and
// sleeps forever; a later one waits a second and appends "end ID". A
// retry that overlapped a live earlier attempt would see that attempt's
// ticks between its own start and end.
func fenceStep(mark string) string {
	return `id=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "start $id" >> markers
if [ ! -e attempted ]; then
	: > attempted
	(while :; do echo "tick $id" >> markers; sleep 0.05; done) &
	sleep 600 # ` + mark + `
fi
sleep 1
echo "end $id" >> markers`
}

// checkNoOverlap reads markers: the last attempt started and ended, and
// no earlier attempt ticked after it started.
func checkNoOverlap(t *testing.T, markers string) {
	t.Helper()
	f, err := os.Open(markers)
	must(t, err)
	defer f.Close()
	var lines []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "start ") {
			last = i
		}
	}
	if last < 0 || !strings.Contains(strings.Join(lines, "\n"), "tick ") {
		t.Fatalf("markers: no first attempt with ticks:\n%s", strings.Join(lines, "\n"))
	}
	id := strings.TrimPrefix(lines[last], "start ")
	ended := false
	for _, l := range lines[last+1:] {
		switch {
		case l == "end "+id:
			ended = true
		case strings.HasPrefix(l, "tick "):
			t.Errorf("an earlier attempt ran during the retry %s: %q\n%s", id, l, strings.Join(lines, "\n"))
			return
		}
	}
	if !ended {
		t.Errorf("the retry %s did not end:\n%s", id, strings.Join(lines, "\n"))
	}
}

// TestFencingAfterHostKill is issue 14's fencing with a real warden
// binary: kill -9 the host while a kanban step and a cron step run,
// each with a ticker left in the background, and start it again. In the
// sandbox everything the steps started dies with the host; with the
// sandbox off it is left running, and the new host kills it and
// confirms its death before the task is retried or the cron run is
// recorded abandoned. Either way the retry never overlaps the attempt
// it replaces.
func TestFencingAfterHostKill(t *testing.T) {
	if testing.Short() && os.Getenv("WARDEN_FULL") != "1" {
		t.Skip("builds and runs the warden binary; not in -short")
	}
	bin := buildWarden(t)
	for _, mode := range []string{"workspace-write", "off"} {
		t.Run(mode, func(t *testing.T) { fencingAfterHostKill(t, bin, mode) })
	}
}

func fencingAfterHostKill(t *testing.T, bin, mode string) {
	root := t.TempDir()
	state, scratch, home := filepath.Join(root, "state"), filepath.Join(root, "scratch"), filepath.Join(root, "home")
	conf, taskDir := filepath.Join(root, "config.yaml"), filepath.Join(root, "task")
	mkdir(t, home, taskDir)
	must(t, os.WriteFile(conf, []byte("sandbox: {mode: \""+mode+"\"}\napprovals:\n  kanban_mode: approve\n  cron_mode: approve\n"), 0o600))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	mark := fmt.Sprintf("fence-%s-%d", mode, time.Now().UnixNano())
	t.Cleanup(func() {
		for _, pid := range hostProcs(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	serve := func(n string) (*proc, *localapi.Client) {
		return serveProc(t, bin, env, root, state, conf, scratch, n)
	}
	ctx := t.Context()
	host1, c1 := serve("1")
	task, err := c1.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "fenced", Workspace: "dir:" + taskDir, Steps: []string{fenceStep(mark)}})
	must(t, err)
	cronDir := filepath.Join(scratch, CronDir)
	_, err = c1.AddCronJob(ctx, localapi.CronAddRequest{Name: "fenced", Schedule: "@yearly", Steps: []string{fenceStep(mark)}})
	must(t, err)
	cronRun, err := c1.RunCronJob(ctx, "fenced")
	must(t, err)
	ticking := func(dir string) bool {
		b, _ := os.ReadFile(filepath.Join(dir, "markers"))
		return strings.Contains(string(b), "tick ")
	}
	waitFor(t, "both steps to tick", func() bool { return ticking(taskDir) && ticking(cronDir) })
	left := hostProcs(mark)
	if len(left) == 0 {
		t.Fatal("no step process found")
	}

	// The crash.
	must(t, syscall.Kill(host1.cmd.Process.Pid, syscall.SIGKILL))
	_ = host1.wait(t, 10*time.Second)

	host2, c2 := serve("2")
	// Host 2 serves only after its fence: nothing of the first attempts
	// is alive now, whoever killed it.
	if still := hostProcs(mark); len(still) > 0 {
		t.Fatalf("host 2 serves while steps of host 1 still run: %v\n%s", still, host2.output())
	}
	if mode == "off" && !strings.Contains(host2.output(), "fenced:  killed ") {
		t.Errorf("host 2 does not report the leftovers it killed:\n%s", host2.output())
	}
	// The cron run is abandoned, and its command is not running.
	waitFor(t, "the cron run to be abandoned", func() bool {
		r, err := c2.CronRun(ctx, cronRun.ID, false)
		return err == nil && r.Status != store.RunRunning
	})
	if still := hostProcs(mark); len(still) > 0 {
		t.Errorf("the cron run was abandoned while its command runs: %v", still)
	}
	// The task is retried, once, without overlapping the first attempt.
	card := waitTask(t, c2, task.ID, store.TaskDone, store.TaskBlocked)
	if card.Status != store.TaskDone || len(card.Runs) != 2 {
		t.Fatalf("task: %s with %d runs, want done after 2", card.Status, len(card.Runs))
	}
	checkNoOverlap(t, filepath.Join(taskDir, "markers"))
	if t.Failed() {
		t.Logf("host 1:\n%s\nhost 2:\n%s", host1.output(), host2.output())
	}
}

// TestFencingAfterStepShellKill: kill -9 of a kanban step's shell while
// the host runs: the step fails, everything it started dies with it (its
// sandbox), and the retry does not overlap it.
func TestFencingAfterStepShellKill(t *testing.T) {
	cfg := configured(t, "approvals:\n  kanban_mode: approve\nkanban:\n  failure_limit: 3\n")
	th := startHost(t, cfg)
	taskDir := t.TempDir()
	mark := fmt.Sprintf("shellkill-%d", time.Now().UnixNano())
	task, err := th.client.AddKanbanTask(t.Context(), localapi.KanbanAddRequest{Title: "killed", Workspace: "dir:" + taskDir, Steps: []string{fenceStep(mark)}})
	must(t, err)
	waitFor(t, "the step to tick", func() bool {
		b, _ := os.ReadFile(filepath.Join(taskDir, "markers"))
		return strings.Contains(string(b), "tick ")
	})
	// The step's shell: the process running the step text whose parent
	// is not itself a copy of it (the ticker is a subshell).
	var shell int
	for _, pid := range hostProcs(mark) {
		if p, err := readPPIDComm(pid); err == nil && (p.comm == "sh" || p.comm == "bash") && !contains(hostProcs(mark), p.ppid) {
			shell = pid
		}
	}
	if shell == 0 {
		t.Fatalf("no step shell among %v", hostProcs(mark))
	}
	must(t, syscall.Kill(shell, syscall.SIGKILL))
	card := waitTask(t, th.client, task.ID, store.TaskDone, store.TaskBlocked)
	if card.Status != store.TaskDone || len(card.Runs) != 2 {
		t.Fatalf("task: %s with %d runs, want done after 2", card.Status, len(card.Runs))
	}
	checkNoOverlap(t, filepath.Join(taskDir, "markers"))
	if still := hostProcs(mark); len(still) > 0 {
		t.Errorf("left running: %v", still)
	}
}

type ppidComm struct {
	ppid int
	comm string
}

func readPPIDComm(pid int) (ppidComm, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ppidComm{}, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	var state string
	var ppid int
	if _, err := fmt.Sscan(s[end+1:], &state, &ppid); err != nil {
		return ppidComm{}, err
	}
	return ppidComm{ppid: ppid, comm: s[open+1 : end]}, nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
