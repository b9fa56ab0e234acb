package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// requestLog records the owner of every request the host creates.
type requestLog struct {
	store.Store
	mu     sync.Mutex
	owners []string
}

func (l *requestLog) CreateRequest(ctx context.Context, r store.Request) error {
	l.mu.Lock()
	l.owners = append(l.owners, r.OwnerText)
	l.mu.Unlock()
	return l.Store.CreateRequest(ctx, r)
}

func (l *requestLog) created() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.owners...)
}

// TestStory1_CronDoesNotLeak is issue 5's end-to-end story 1 at the
// host's level (a real host: SQLite, the admin socket, the console,
// real subprocesses). The reference system's cron run set a
// process-wide flag that stayed set, so later chat sessions were judged
// as cron. Here:
//
//  1. a cron job with a dangerous step runs and is denied under
//     cron_mode: deny, with the gate's reason in its history;
//  2. afterwards a web session's exec of a dangerous command in the same
//     host becomes a pending request for that session, shown on the
//     console — not denied, not routed to a terminal — and runs once
//     approved;
//  3. then 10 cron runs interleaved with 10 concurrent web-session
//     actions give the same results: every cron run denied, every web
//     action asked in its own session and run once approved.
func TestStory1_CronDoesNotLeak(t *testing.T) {
	cfg := configured(t, "approvals:\n  cron_mode: deny\n  timeout: 600\n")
	reqs := &requestLog{}
	cfg.wrap = func(s store.Store) store.Store { reqs.Store = s; return reqs }
	th := startHost(t, cfg)
	ctx := t.Context()
	work := t.TempDir()

	// The cron step aims at a directory that exists, in the directory
	// cron steps run in (a relative delete: a path under /tmp would be a
	// temporary one, and the sandbox shows nothing else of the test's
	// directories): a leak in either direction would show as it
	// disappearing.
	cronTarget := filepath.Join(cfg.ScratchDir, CronDir, "cron-target")
	if err := os.MkdirAll(cronTarget, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{
		Name: "tidy", Every: "1h", Overlap: "allow",
		Steps: []string{"echo before", "rm -rf cron-target", "echo after"},
	}); err != nil {
		t.Fatal(err)
	}
	runCron := func() store.CronRun {
		run, err := th.client.RunCronJob(ctx, "tidy")
		if err != nil {
			t.Error(err)
			return store.CronRun{}
		}
		if run, err = th.client.CronRun(ctx, run.ID, true); err != nil {
			t.Error(err)
		}
		return run
	}
	checkDenied := func(run store.CronRun) {
		t.Helper()
		if run.Status != store.RunFailed || run.Trigger != store.TriggerManual || run.Parent != "" || len(run.Steps) != 2 {
			t.Errorf("cron run %s: status %s, trigger %s, parent %q, %d steps; want failed after 2 steps", run.ID, run.Status, run.Trigger, run.Parent, len(run.Steps))
			return
		}
		first, second := run.Steps[0], run.Steps[1]
		if first.Verdict != "allow" || first.ExitCode != 0 || first.Output != "before\n" {
			t.Errorf("cron run %s step 1: %+v", run.ID, first)
		}
		if second.Verdict != "deny" || second.Rule != gate.RuleCronMode || second.ExitCode != -1 || !strings.Contains(second.Output, "warden blocked this shell command") {
			t.Errorf("cron run %s step 2: %+v", run.ID, second)
		}
		if !strings.Contains(run.Error, "step 2 denied ("+gate.RuleCronMode+")") || !strings.Contains(run.Error, "without a human to approve") {
			t.Errorf("cron run %s: reason %q", run.ID, run.Error)
		}
	}

	// 1. The cron run is denied; nothing was asked.
	checkDenied(runCron())
	if len(reqs.created()) != 0 {
		t.Fatalf("a cron run created requests: %v", reqs.created())
	}
	hist, err := th.client.CronHistory(ctx, "tidy", 0)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %d %v", len(hist), err)
	}
	checkDenied(hist[0])

	// 2. A web session afterwards is asked, on the console, in its own
	// session, and runs once approved.
	// webAction runs "rm -rf dir" as web session session, checks its
	// question, waits for hold (nil: no wait), and approves it.
	webAction := func(session, dir string, hold <-chan struct{}) {
		s := startExec(ctx, th.client, localapi.ExecRequest{Session: session, Command: "rm -rf " + filepath.Base(dir), Dir: filepath.Dir(dir)})
		p, err := s.wait(localapi.EventPending)
		if err != nil {
			t.Errorf("%s: %v", session, err)
			return
		}
		if !strings.HasPrefix(p.Console, th.info.ConsoleURL+"pending#req-") {
			t.Errorf("%s: question not on the console: %q", session, p.Console)
		}
		r, err := th.st.GetRequest(ctx, p.ID)
		if err != nil {
			t.Error(err)
			return
		}
		var o struct {
			CanAnswer  bool   `json:"can_answer"`
			Surface    string `json:"surface"`
			Unattended bool   `json:"lineage_unattended"`
		}
		if err := json.Unmarshal(r.Owner, &o); err != nil {
			t.Error(err)
		}
		want := "gateway:web/" + session + ",session=" + session
		if r.Session != session || r.OwnerText != want || r.State != store.Pending || !o.CanAnswer || o.Surface != "web" || o.Unattended {
			t.Errorf("%s: request %+v owner %s", session, r, r.Owner)
		}
		if hold != nil {
			<-hold
		}
		// Still pending, and not run: nothing the cron runs did ended it.
		if r, err := th.st.GetRequest(ctx, p.ID); err != nil || r.State != store.Pending {
			t.Errorf("%s: request %s is %s (%v) before its answer", session, p.ID, r.State, err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: ran before it was approved: %v", session, err)
		}
		if _, err := th.client.Approve(ctx, p.ID, localapi.ApproveRequest{}); err != nil {
			t.Error(err)
			return
		}
		if e, err := s.wait(localapi.EventExit); err != nil || *e.Code != 0 {
			t.Errorf("%s: %+v %v, want exit 0", session, e, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: %s still there after approval: %v", session, dir, err)
		}
	}
	first := filepath.Join(work, "web-build")
	mkdir(t, first)
	s := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-1", Command: "rm -rf web-build", Dir: work})
	p, _ := s.until(t, localapi.EventPending)
	pending := consolePending(t, th, "web-1")
	if !strings.Contains(pending, `id="req-`+p.ID+`"`) || !strings.Contains(pending, "rm -rf web-build") {
		t.Fatalf("the console's pending list for web-1 lacks %s", p.ID)
	}
	if _, err := th.client.Approve(ctx, p.ID, localapi.ApproveRequest{}); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.until(t, localapi.EventExit); *e.Code != 0 {
		t.Fatalf("web-1: exit %d", *e.Code)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("web-1's command did not run: %v", err)
	}

	// 3. Ten cron runs interleaved with ten concurrent web sessions,
	// started alternately. Half the web questions are answered only
	// after every cron run has ended, so those runs happen while they
	// are pending; the other half are answered as soon as they are
	// asked, while the cron runs go on.
	const n = 10
	var wg, cronWG sync.WaitGroup
	cronDone := make(chan struct{})
	runs := make([]store.CronRun, n)
	for i := range n {
		dir := filepath.Join(work, fmt.Sprintf("w%d-build", i))
		mkdir(t, dir)
		cronWG.Go(func() { runs[i] = runCron() })
		var hold <-chan struct{}
		if i%2 == 0 {
			hold = cronDone
		}
		wg.Go(func() { webAction(fmt.Sprintf("w-%d", i), dir, hold) })
	}
	cronWG.Wait()
	close(cronDone)
	wg.Wait()
	for _, r := range runs {
		checkDenied(r)
	}
	if _, err := os.Stat(cronTarget); err != nil {
		t.Fatalf("the cron target is gone: %v", err)
	}

	// Every question came from a web session, one per action; none
	// from a cron run.
	created := reqs.created()
	if len(created) != n+1 {
		t.Errorf("%d requests created, want %d: %v", len(created), n+1, created)
	}
	for _, o := range created {
		if !strings.HasPrefix(o, "gateway:web/") {
			t.Errorf("request for %s", o)
		}
	}
	// The audit log agrees: each cron run allowed its safe step and
	// denied its dangerous one as itself, asking nobody; each web action
	// was asked, then allowed by the human.
	recs := th.decisions(t)
	count := map[string]int{}
	for _, d := range recs {
		switch {
		case strings.HasPrefix(d.OwnerText, "cron:tidy,run="):
			if d.RequestID != "" || (d.Verdict == "deny") != (d.Rule == gate.RuleCronMode) {
				t.Errorf("cron record %d: %s %s request %q", d.Seq, d.Verdict, d.Rule, d.RequestID)
			}
			count["cron "+d.Verdict]++
		case strings.HasPrefix(d.OwnerText, "gateway:web/"):
			// The gate's ask, then the human's answer to the request.
			if !strings.HasPrefix(d.Rule, "human") || (d.Verdict == "allow" && d.RequestID == "") {
				t.Errorf("web record %d: %s %s request %q", d.Seq, d.Verdict, d.Rule, d.RequestID)
			}
			count["web "+d.Verdict]++
		default:
			t.Errorf("record %d of %s", d.Seq, d.OwnerText)
		}
	}
	want := map[string]int{"cron allow": n + 1, "cron deny": n + 1, "web ask": n + 1, "web allow": n + 1}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("audit records %v, want %v", count, want)
	}
	if res, err := th.client.Verify(ctx); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}
}

// wait is until without t.Fatal, for goroutines other than the test's:
// it reads events until one of type kind, and fails when the stream
// ends first or nothing comes for 20s.
func (s *execStream) wait(kind string) (localapi.Event, error) {
	for {
		select {
		case e, ok := <-s.events:
			switch {
			case !ok:
				return localapi.Event{}, fmt.Errorf("exec stream ended while waiting for %s", kind)
			case e.Event == kind:
				return e, nil
			case e.Event == localapi.EventExit || e.Event == localapi.EventDenied || e.Event == localapi.EventError:
				return e, fmt.Errorf("exec ended with %+v while waiting for %s", e, kind)
			}
		case <-time.After(20 * time.Second):
			return localapi.Event{}, fmt.Errorf("no %s event within 20s", kind)
		}
	}
}

// consolePending fetches the console's live pending list of session as
// a script with a read token would.
func consolePending(t *testing.T, th *testHost, session string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, th.info.ConsoleURL+"pending/list?session="+session, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+th.apiToken(t, "read"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("console pending list: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// mkdir makes each of dirs, with their parents.
func mkdir(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCronStopsWithTheHost: a cron run in progress at shutdown is
// killed and recorded failed before the store closes, and the next
// start reports the job.
func TestCronStopsWithTheHost(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	ctx := t.Context()
	// In the steps' workspace: the only place a cron step can write.
	marker := filepath.Join(th.cfg.ScratchDir, CronDir, "started")
	if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{Name: "slow", Schedule: "@daily", Steps: []string{"touch " + marker + " && sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	run, err := th.client.RunCronJob(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the step did not start within 10s")
		}
	}
	start := time.Now()
	th.stop(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %v with a cron step running", took)
	}

	th2 := startHost(t, cfg)
	if !strings.Contains(th2.out.String(), "  cron:    1 job; steps run in "+filepath.Join(th2.cfg.ScratchDir, CronDir)+"\n") {
		t.Errorf("startup output:\n%s", th2.out.String())
	}
	got, err := th2.client.CronRun(ctx, run.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunFailed || len(got.Steps) != 1 || !strings.Contains(got.Error, "host shutting down") {
		t.Fatalf("run after shutdown: %s %q", got.Status, got.Error)
	}
	fi, err := os.Stat(filepath.Join(th2.cfg.ScratchDir, CronDir))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cron workspace: %v %v", fi, err)
	}
}
