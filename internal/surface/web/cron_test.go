package web

import (
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

var (
	_ hostsurface.Scheduler = (*cron.Scheduler)(nil)
	_ hostsurface.CronRuns  = (*sqlite.DB)(nil)
)

var startedRE = regexp.MustCompile(`Started run ([0-9A-Z]{26}) of nightly\.`)

// TestCronPage: the page lists the jobs and, after "Run now", the run
// with each step's verdict, rule, exit code and (escaped) output; the
// run is the operator's (owner cron, no parent) and its dangerous step
// is denied under the default cron_mode.
func TestCronPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{cron: true})
	c := f.loggedIn()

	p := c.get("/cron")
	if p.status != http.StatusOK || !strings.Contains(p.body, "No cron jobs.") || !strings.Contains(p.body, "No runs yet.") {
		t.Fatalf("empty cron page: %d %s", p.status, p.body)
	}
	if !strings.Contains(p.body, `<a href="/cron" aria-current="page">Cron</a>`) {
		t.Error("no current Cron link in the navigation")
	}

	job, err := f.cron.AddJob(t.Context(), store.CronJob{
		Name: "nightly", Schedule: "0 3 * * *", TZ: "Europe/Berlin", Enabled: true,
		Steps: []string{"echo '<b>hi</b>'", "rm -rf build", "echo after"},
	})
	must(t, err, "add job")
	p = c.get("/cron")
	for _, want := range []string{
		`id="job-nightly"`, `<code class="schedule">0 3 * * *</code>`, "Europe/Berlin",
		"enabled · next run " + clock(job.NextRun), "overlap skip · catch-up once",
		`action="/cron/nightly/run"`, `name="csrf" value="` + c.csrf + `"`, "Run now",
		html.EscapeString("echo '<b>hi</b>'"),
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("cron page lacks %q", want)
		}
	}

	// Without its CSRF token, "Run now" is refused and nothing runs.
	if r := c.post("/cron/nightly/run", url.Values{"csrf": {""}}); r.status != http.StatusForbidden {
		t.Fatalf("run without CSRF: %d", r.status)
	}
	if r := f.client().post("/cron/nightly/run", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("run without login: %d", r.status)
	}
	if runs, err := f.db.ListCronRuns(t.Context(), "nightly", 0); err != nil || len(runs) != 0 {
		t.Fatalf("runs after refused posts: %v %v", runs, err)
	}

	r := c.post("/cron/nightly/run", nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/cron?job=nightly" {
		t.Fatalf("run now: %d to %q", r.status, r.header.Get("Location"))
	}
	p = c.get(r.header.Get("Location"))
	m := startedRE.FindStringSubmatch(flashOf(p.body))
	if m == nil {
		t.Fatalf("flash %q", flashOf(p.body))
	}
	run, err := f.cron.Wait(t.Context(), m[1])
	must(t, err, "wait")
	if run.Status != store.RunFailed || run.Trigger != store.TriggerManual || run.Parent != "" || len(run.Steps) != 2 {
		t.Fatalf("run: %+v", run)
	}

	p = c.get("/cron?job=nightly")
	i := strings.Index(p.body, `<article class="run cron-run failed" id="run-`+run.ID+`">`)
	if i < 0 {
		t.Fatalf("the run is not on the page: %s", p.body)
	}
	runHTML := p.body[i:]
	for _, want := range []string{
		`<span class="state">failed</span>`, "manual · started ",
		html.EscapeString(run.Error),
		// Step 1 ran: allow, exit 0, its output escaped in a <details>.
		`<li class="step allow">`, `<b class="verdict">allow</b> · rule <code>safe</code> · exit 0`,
		`<details><summary>output (10 bytes)</summary><pre class="out">&lt;b&gt;hi&lt;/b&gt;` + "\n</pre></details>",
		// Step 2 was denied by cron_mode, with the gate's reason.
		`<li class="step deny">`, `<b class="verdict">deny</b> · rule <code>unattended.cron_mode</code> · exit -1`,
		"warden blocked this shell command",
	} {
		if !strings.Contains(runHTML, want) {
			t.Errorf("run lacks %q", want)
		}
	}
	if strings.Contains(p.body, "<b>hi</b>") {
		t.Error("step output is not escaped")
	}
	if n := strings.Count(runHTML, `<li class="step `); n != 2 {
		t.Errorf("%d steps shown, want 2 (the third never ran)", n)
	}
	// The gate decided as the run's own owner: cron, no parent.
	ds, err := f.db.Decisions(t.Context(), store.AuditFilter{Verdict: "deny"})
	must(t, err, "decisions")
	if len(ds) != 1 || !strings.HasPrefix(ds[0].OwnerText, "cron:nightly,run="+run.ID) || strings.Contains(ds[0].OwnerText, ">") {
		t.Fatalf("deny records: %+v", ds)
	}

	// An unknown job, or a name no job can have, is said so.
	for _, name := range []string{"nope", "bad%20name"} {
		if msg := flashOf(c.follow("/cron/"+name+"/run", nil).body); !strings.Contains(msg, "There is no cron job") {
			t.Errorf("run %s: %q", name, msg)
		}
	}

	// A script with the token gets the notice as text.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/cron/nightly/run", nil)
	req.Header.Set("Authorization", "Bearer "+f.adminToken)
	if r := c.do(req); r.status != http.StatusAccepted || !startedRE.MatchString(r.body) {
		t.Fatalf("bearer run: %d %q", r.status, r.body)
	} else {
		_, err := f.cron.Wait(t.Context(), startedRE.FindStringSubmatch(r.body)[1])
		must(t, err, "wait")
	}
}

// TestCronRunSkipped: "Run now" while a run of a skip-overlap job is in
// progress says the new run was skipped.
func TestCronRunSkipped(t *testing.T) {
	f := newFixture(t, fixtureOptions{cron: true})
	c := f.loggedIn()
	dir := f.dir // the steps' workspace: what a step sees of the host's /tmp
	_, err := f.cron.AddJob(t.Context(), store.CronJob{
		Name: "nightly", Schedule: "@daily", Enabled: true,
		Steps: []string{"while [ ! -e " + dir + "/go ]; do sleep 0.05; done"},
	})
	must(t, err, "add job")
	first := startedRE.FindStringSubmatch(flashOf(c.follow("/cron/nightly/run", nil).body))
	if first == nil {
		t.Fatal("first run did not start")
	}
	if msg := flashOf(c.follow("/cron/nightly/run", nil).body); !strings.Contains(msg, "was skipped") {
		t.Errorf("second run: %q", msg)
	}
	must(t, os.WriteFile(dir+"/go", nil, 0o600), "release")
	run, err := f.cron.Wait(t.Context(), first[1])
	must(t, err, "wait")
	if run.Status != store.RunSucceeded {
		t.Fatalf("first run: %+v", run)
	}
}

// TestCronPageWithoutScheduler: a console without cron says so.
func TestCronPageWithoutScheduler(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	if p := c.get("/cron"); p.status != http.StatusOK || !strings.Contains(p.body, "Cron is not available on this host.") {
		t.Fatalf("cron page: %d %s", p.status, p.body)
	}
	if msg := flashOf(c.follow("/cron/x/run", nil).body); !strings.Contains(msg, "not available") {
		t.Fatalf("run: %q", msg)
	}
}
