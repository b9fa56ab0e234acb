package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/store"
)

// The seed stories with their parts on different hosts (issue 19). The
// worker-environment story is in
// TestMultiHost_RemoteWorkerAsksOnAnotherHostsConsole: every host and
// the remote worker start with the reference system's markers in their
// environment, the step is still asked, and its environment holds none
// of them.

// cronRun runs job now on host h and waits for it (warden cron run
// --wait --json).
func (c *testCluster) cronRun(h *clusterHost, job string) store.CronRun {
	c.t.Helper()
	out, _ := c.cli("cron", "run", job, "--wait", "--json", "--state", h.state)
	var run store.CronRun
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		c.t.Fatalf("cron run %s on host %s: %v\n%s", job, h.name, err, out)
	}
	return run
}

// TestMultiHost_StoryCronDoesNotLeak is story 1 across two hosts: cron
// runs on A and on B, while web sessions on both have questions
// pending, are denied by cron_mode at once and ask nobody; each
// session's question stays its own (owner gateway:web/…), is answered
// on the other host, and runs; no cron run's target is touched.
func TestMultiHost_StoryCronDoesNotLeak(t *testing.T) {
	c := newCluster(t, 15, "")
	a, b := c.serve("a"), c.serve("b")
	db := c.open()
	if out, err := c.cli("cron", "add", "tidy", "--every", "1h", "--overlap", "allow", "--step", "echo before", "--step", "rm -rf cron-target", "--state", a.state); err != nil {
		t.Fatalf("cron add: %v\n%s", err, out)
	}
	for _, h := range []*clusterHost{a, b} {
		mkdir(t, filepath.Join(c.root, "scratch-"+h.name, CronDir, "cron-target"))
	}
	mkdir(t, filepath.Join(c.work, "wa"))
	mkdir(t, filepath.Join(c.work, "wb"))

	exB := c.exec(b, "web-b", "rm -rf ./wb")
	rb := pendingOf(t, a, "web-b")
	exA := c.exec(a, "web-a", "rm -rf ./wa")
	ra := pendingOf(t, b, "web-a")
	ids := map[*clusterHost]string{}
	for _, h := range []*clusterHost{a, b} {
		st, err := h.c.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ids[h] = st.Host
	}
	for i := range 3 {
		for _, h := range []*clusterHost{a, b} {
			run := c.cronRun(h, "tidy")
			if run.Status != store.RunFailed || run.Host != ids[h] || len(run.Steps) != 2 ||
				run.Steps[1].Verdict != "deny" || run.Steps[1].Rule != gate.RuleCronMode {
				t.Errorf("cron run %d on host %s: %s on %s, steps %+v", i, h.name, run.Status, run.Host, run.Steps)
			}
		}
	}
	for _, r := range []string{ra.ID, rb.ID} {
		req, err := db.GetRequest(t.Context(), r)
		if err != nil || req.State != store.Pending || !strings.HasPrefix(req.OwnerText, "gateway:web/") {
			t.Fatalf("request %s after the cron runs: %+v %v", r, req, err)
		}
	}
	if out, err := c.cli("approvals", "approve", rb.ID, "--state", a.state); err != nil {
		t.Fatalf("approve web-b on a: %v\n%s", err, out)
	}
	if out, err := c.cli("approvals", "approve", ra.ID, "--state", b.state); err != nil {
		t.Fatalf("approve web-a on b: %v\n%s", err, out)
	}
	for name, ex := range map[string]*proc{"web-a": exA, "web-b": exB} {
		if err := ex.wait(t, 30*time.Second); err != nil {
			t.Errorf("%s: %v\n%s", name, err, ex.output())
		}
	}
	for _, d := range []string{"wa", "wb"} {
		if _, err := os.Stat(filepath.Join(c.work, d)); !os.IsNotExist(err) {
			t.Errorf("%s: approved, not run: %v", d, err)
		}
	}
	for _, h := range []*clusterHost{a, b} {
		if _, err := os.Stat(filepath.Join(c.root, "scratch-"+h.name, CronDir, "cron-target")); err != nil {
			t.Errorf("host %s's cron target is gone: %v", h.name, err)
		}
	}
	recs, err := db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range recs {
		cronRec := strings.HasPrefix(d.OwnerText, "cron:tidy,")
		if cronRec && d.RequestID != "" || !cronRec && !strings.HasPrefix(d.OwnerText, "gateway:web/web-") {
			t.Errorf("record %d: %s %s %s request %q", d.Seq, d.OwnerText, d.Verdict, d.Rule, d.RequestID)
		}
	}
}

// TestMultiHost_StorySessionsStayApart is story 2 across two hosts:
// sessions s1 (on A) and s2 (on B) wait at once; approving s1's for its
// session on B releases s1 only; the session grant is seen on every
// host for s1 and for nobody else; a denial with a reason reaches s2
// only.
func TestMultiHost_StorySessionsStayApart(t *testing.T) {
	c := newCluster(t, 15, "")
	a, b := c.serve("a"), c.serve("b")
	for _, d := range []string{"x1", "x2"} {
		mkdir(t, filepath.Join(c.work, d))
	}
	ex1 := c.exec(a, "s1", "rm -rf ./x1")
	ex2 := c.exec(b, "s2", "rm -rf ./x2")
	r1, r2 := pendingOf(t, b, "s1"), pendingOf(t, a, "s2")
	if out, err := c.cli("approvals", "approve", r1.ID, "--scope", "session", "--state", b.state); err != nil {
		t.Fatalf("approve s1 for its session on b: %v\n%s", err, out)
	}
	if err := ex1.wait(t, 30*time.Second); err != nil {
		t.Fatalf("s1 after its approval: %v\n%s", err, ex1.output())
	}
	select {
	case <-ex2.done:
		t.Fatalf("s2 ended when s1 was approved:\n%s", ex2.output())
	case <-time.After(500 * time.Millisecond):
	}
	// s1's session grant holds on the other host, for s1 only.
	mkdir(t, filepath.Join(c.work, "x1"))
	if err := c.exec(b, "s1", "rm -rf ./x1").wait(t, 30*time.Second); err != nil {
		t.Errorf("s1 again, on b, under its session grant: %v", err)
	}
	mkdir(t, filepath.Join(c.work, "x1"))
	ex3 := c.exec(a, "s3", "rm -rf ./x1")
	r3 := pendingOf(t, b, "s3")
	if out, err := c.cli("approvals", "deny", r2.ID, "--reason", "wrong directory", "--state", a.state); err != nil {
		t.Fatalf("deny s2 on a: %v\n%s", err, out)
	}
	if err := ex2.wait(t, 30*time.Second); err == nil || !strings.Contains(ex2.output(), "wrong directory") {
		t.Errorf("s2 after its denial: %v\n%s", err, ex2.output())
	}
	if strings.Contains(ex3.output(), "wrong directory") {
		t.Errorf("s3 heard s2's denial:\n%s", ex3.output())
	}
	if out, err := c.cli("approvals", "deny", r3.ID, "--state", b.state); err != nil {
		t.Fatalf("deny s3 on b: %v\n%s", err, out)
	}
	if err := ex3.wait(t, 30*time.Second); err == nil {
		t.Errorf("s3 ran after its denial:\n%s", ex3.output())
	}
	for _, d := range []string{"x1", "x2"} {
		if _, err := os.Stat(filepath.Join(c.work, d)); err != nil {
			t.Errorf("%s: a denied command ran: %v", d, err)
		}
	}
}
