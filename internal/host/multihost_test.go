package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/postgres"
	"github.com/wardenhq/warden/internal/store/postgres/pgtest"
)

// cluster is two or three real `warden serve` processes on one
// PostgreSQL schema, each with its own state directory.
type testCluster struct {
	t    *testing.T
	bin  string
	root string
	url  string
	conf string
	env  []string
	work string
}

type clusterHost struct {
	name  string
	state string
	p     *proc
	c     *localapi.Client
}

// newCluster builds warden and prepares a schema, a config (manual
// approvals, lease seconds) and a work directory.
func newCluster(t *testing.T, lease int, extraConf string) *testCluster {
	t.Helper()
	if testing.Short() && os.Getenv("WARDEN_FULL") != "1" {
		t.Skip("builds and runs warden hosts; not in -short")
	}
	url := pgtest.Schema(t)
	bin := buildWarden(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	mkdir(t, home)
	mkdir(t, work)
	conf := filepath.Join(root, "config.yaml")
	writeFile(t, conf, fmt.Sprintf("approvals:\n  mode: manual\n  timeout: 600\ncluster:\n  lease: %d\n%s", lease, extraConf))
	return &testCluster{t: t, bin: bin, root: root, url: url, conf: conf, env: hostEnv(home), work: work}
}

// serve starts host name on the shared store and waits for its socket.
func (c *testCluster) serve(name string) *clusterHost {
	t := c.t
	t.Helper()
	state := filepath.Join(c.root, "state-"+name)
	p := startProc(t, c.env, c.root, filepath.Join(c.root, "serve-"+name+".log"), c.bin,
		"serve", "--state", state, "--config", c.conf, "--scratch", filepath.Join(c.root, "scratch-"+name),
		"--addr", "127.0.0.1:0", "--store", c.url)
	return &clusterHost{name: name, state: state, p: p, c: serving(t, p, state, name)}
}

// cli runs warden in the work directory.
func (c *testCluster) cli(args ...string) (string, error) {
	cmd := exec.CommandContext(c.t.Context(), c.bin, args...)
	cmd.Env, cmd.Dir = c.env, c.work
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// exec starts `warden exec --session S -- CMD` against host h.
func (c *testCluster) exec(h *clusterHost, session, command string) *proc {
	return startProc(c.t, c.env, c.work, filepath.Join(c.root, "exec-"+session+".log"), c.bin,
		"exec", "--session", session, "--state", h.state, "--", command)
}

// pendingOf waits until session's request is pending, as host h sees
// it, and returns it.
func pendingOf(t *testing.T, h *clusterHost, session string) localapi.Approval {
	t.Helper()
	var r localapi.Approval
	waitFor(t, "a pending request of session "+session+" on host "+h.name, func() bool {
		list, err := h.c.Approvals(t.Context())
		if err != nil {
			return false
		}
		for _, p := range list {
			if p.Session == session {
				r = p
				return true
			}
		}
		return false
	})
	return r
}

// open opens the shared store from the test.
func (c *testCluster) open() *postgres.DB {
	c.t.Helper()
	db, err := postgres.Open(c.t.Context(), c.url, postgres.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { db.Close() })
	return db
}

// TestMultiHost_AnswerWakesAnotherHost: a command asked on host A is
// answered on host B (its admin socket, as the console would), and the
// waiter on A runs it; a denial on B is A's denial.
func TestMultiHost_AnswerWakesAnotherHost(t *testing.T) {
	c := newCluster(t, 15, "")
	a, b := c.serve("a"), c.serve("b")
	mkdir(t, filepath.Join(c.work, "y"))
	mkdir(t, filepath.Join(c.work, "z"))

	ex := c.exec(a, "s1", "rm -rf ./y")
	r := pendingOf(t, b, "s1") // B sees A's question
	if out, err := c.cli("approvals", "approve", r.ID, "--state", b.state); err != nil {
		t.Fatalf("approve on host b: %v\n%s", err, out)
	}
	if err := ex.wait(t, 30*time.Second); err != nil {
		t.Fatalf("exec on host a after b's approval: %v\n%s", err, ex.output())
	}
	if _, err := os.Stat(filepath.Join(c.work, "y")); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}

	ex2 := c.exec(b, "s2", "rm -rf ./z")
	r2 := pendingOf(t, a, "s2")
	if out, err := c.cli("approvals", "deny", r2.ID, "--reason", "not today", "--state", a.state); err != nil {
		t.Fatalf("deny on host a: %v\n%s", err, out)
	}
	if err := ex2.wait(t, 30*time.Second); err == nil {
		t.Errorf("exec on host b ran after a's denial:\n%s", ex2.output())
	}
	if _, err := os.Stat(filepath.Join(c.work, "z")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	for _, h := range []*clusterHost{a, b} {
		if out, err := c.cli("audit", "verify", "--state", h.state); err != nil || !strings.Contains(out, "audit chain ok") {
			t.Errorf("warden audit verify on host %s: %v\n%s", h.name, err, out)
		}
	}
}

// TestMultiHost_CronFiresOnce: two hosts, one schedule, 100 jobs due at
// the same instant: every slot fires exactly once across both hosts.
func TestMultiHost_CronFiresOnce(t *testing.T) {
	c := newCluster(t, 15, "")
	db := c.open()
	ctx := t.Context()
	due := time.Now().Add(4 * time.Second)
	const jobs = 100
	for i := range jobs {
		j, err := cron.Prepare(store.CronJob{Name: fmt.Sprintf("job%03d", i), Schedule: "0 0 1 1 *", Steps: []string{"true"}, Enabled: true}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		j.NextRun, j.NextSlot = due, "slot-"+due.UTC().Format(time.RFC3339Nano)
		if err := db.AddCronJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	a, b := c.serve("a"), c.serve("b")
	var runs []store.CronRun
	waitFor(t, "every job to have run", func() bool {
		var err error
		runs, err = db.ListCronRuns(ctx, "", 0)
		if err != nil || len(runs) < jobs {
			return false
		}
		for _, r := range runs {
			if r.Status == store.RunRunning {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second) // a double firing would show by now
	runs, err := db.ListCronRuns(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	byHost := map[string]int{}
	for _, r := range runs {
		per[r.Job]++
		byHost[r.Host]++
		if r.Trigger != store.TriggerSchedule || r.Status != store.RunSucceeded {
			t.Errorf("run %s of %s: %s %s (%s)", r.ID, r.Job, r.Trigger, r.Status, r.Error)
		}
	}
	if len(per) != jobs {
		t.Errorf("%d jobs ran, want %d", len(per), jobs)
	}
	for job, n := range per {
		if n != 1 {
			t.Errorf("job %s fired %d times, want once", job, n)
		}
	}
	t.Logf("runs by host: %v", byHost)
	_, _ = a, b
}

// TestMultiHost_KillOneHost: three hosts; a question pending on each of
// A and B; kill -9 A. B and C keep B's question (answered on C, B's
// waiter runs it), and A's question is withdrawn once its lease
// lapses, by one of them, with exactly one audit record of its end.
func TestMultiHost_KillOneHost(t *testing.T) {
	c := newCluster(t, 3, "")
	a, b, hc := c.serve("a"), c.serve("b"), c.serve("c")
	mkdir(t, filepath.Join(c.work, "ya"))
	mkdir(t, filepath.Join(c.work, "yb"))
	exA := c.exec(a, "sa", "rm -rf ./ya")
	exB := c.exec(b, "sb", "rm -rf ./yb")
	ra := pendingOf(t, hc, "sa")
	rb := pendingOf(t, hc, "sb")

	if err := syscall.Kill(a.p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := a.p.wait(t, 10*time.Second); err == nil {
		t.Fatal("host a exited cleanly after kill -9")
	}
	_ = exA.wait(t, 10*time.Second) // its asker loses its host

	// B's question is still pending everywhere, and C's answer wakes B.
	if got := pendingOf(t, hc, "sb"); got.ID != rb.ID {
		t.Fatalf("pending on c: %s, want %s", got.ID, rb.ID)
	}
	if out, err := c.cli("approvals", "approve", rb.ID, "--state", hc.state); err != nil {
		t.Fatalf("approve b's question on c: %v\n%s", err, out)
	}
	if err := exB.wait(t, 30*time.Second); err != nil {
		t.Fatalf("exec on b after c's approval: %v\n%s", err, exB.output())
	}

	// A's question is withdrawn once A's lease (3s) lapses.
	db := c.open()
	waitFor(t, "a's question to be withdrawn", func() bool {
		r, err := db.GetRequest(t.Context(), ra.ID)
		return err == nil && r.State != store.Pending
	})
	r, err := db.GetRequest(t.Context(), ra.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.Withdrawn {
		t.Errorf("a's question: %s (%s), want withdrawn", r.State, r.Reason)
	}
	if _, err := os.Stat(filepath.Join(c.work, "ya")); err != nil {
		t.Errorf("a's command ran: %v", err)
	}
	time.Sleep(2 * time.Second) // both survivors have reaped by now
	recs, err := db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int{}
	for _, d := range recs {
		if d.RequestID != "" && d.Verdict != store.VerdictAsk {
			ends[d.RequestID]++
		}
	}
	if ends[ra.ID] != 1 || ends[rb.ID] != 1 {
		t.Errorf("audit records of the ends: a's %d, b's %d, want 1 each", ends[ra.ID], ends[rb.ID])
	}
	// An answer to A's question now is refused.
	if out, err := c.cli("approvals", "approve", ra.ID, "--state", b.state); err == nil {
		t.Errorf("approving the dead host's question succeeded:\n%s", out)
	}
	for _, h := range []*clusterHost{b, hc} {
		if out, err := c.cli("audit", "verify", "--state", h.state); err != nil || !strings.Contains(out, "audit chain ok") {
			t.Errorf("warden audit verify on host %s: %v\n%s", h.name, err, out)
		}
	}
	if t.Failed() {
		for _, h := range []*clusterHost{a, b, hc} {
			t.Logf("host %s:\n%s", h.name, h.p.output())
		}
	}
}
