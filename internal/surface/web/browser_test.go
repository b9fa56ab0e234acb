package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/store"
)

// chromiumPath is Debian's Chromium (package "chromium").
const chromiumPath = "/usr/bin/chromium"

// newBrowser starts a headless Chromium for one test and returns its
// context. Without WARDEN_FULL=1 the test skips when Chromium is absent;
// with it, the test fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("WARDEN_FULL") == "1" {
			t.Fatalf("WARDEN_FULL=1 and no Chromium at %s (apt-get install chromium): %v", chromiumPath, err)
		}
		t.Skipf("no Chromium at %s; set WARDEN_FULL=1 to make this a failure", chromiumPath)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-extensions", true),
		// Loopback only: no name resolves except the loopback ones, and
		// no proxy is asked.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.Flag("no-proxy-server", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	)
	ctx, cancel := chromedp.NewContext(actx)
	// Start the browser on a context without a deadline (the first Run
	// owns the browser's lifetime).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// step runs browser actions with a timeout.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// text reads an element's text. The live fragments are re-rendered on
// every event, so the query and the read happen in one script in the
// page (a node found by one CDP call may be gone by the next), retried
// until the element exists.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e === null ? null : e.textContent.trim(); })()`, sel)
	for {
		s, err := chromedp.Run(sctx, chromedp.Evaluate[*string](js))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		if s != nil {
			return *s
		}
		select {
		case <-sctx.Done():
			t.Fatalf("text of %s: no such element", sel)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// loginAndWatch opens the pending page (sent to the login page, which
// says how to get a link), then a one-time login link as `warden
// console` prints it, and waits on the pending page until the event
// stream is connected and nothing is pending.
func loginAndWatch(t *testing.T, ctx context.Context, f *fixture) {
	t.Helper()
	step(t, ctx, "log in",
		chromedp.Navigate(f.srv.URL+"/pending"),
		chromedp.WaitVisible(chromedp.CSS("pre.cmd")), // redirected to the login page
		chromedp.Navigate(f.srv.URL+f.loginLink()),
		chromedp.WaitVisible(chromedp.CSS("#pending p.empty")),
		chromedp.WaitVisible(chromedp.CSS("#live")), // the event stream is open
	)
}

// browse opens a browser logged in to f's console and watching its
// events.
func browse(t *testing.T, f *fixture) context.Context {
	t.Helper()
	ctx := newBrowser(t)
	loginAndWatch(t, ctx, f)
	return ctx
}

// askShell runs command in dir in the background as console session
// key and waits for its request; card is the request's card selector.
func askShell(t *testing.T, f *fixture, key, command, dir string) (store.Request, string, <-chan shellResult) {
	t.Helper()
	pending, done := f.shellAsync(t.Context(), key, command, dir)
	req := waitRequest(t, pending, done)
	return req, "#req-" + req.ID, done
}

// seeShell is askShell, then waits for the request's card to show on
// the page.
func seeShell(t *testing.T, ctx context.Context, f *fixture, key, command, dir string) (store.Request, string, <-chan shellResult) {
	t.Helper()
	req, card, done := askShell(t, f, key, command, dir)
	step(t, ctx, "see the request of "+key, chromedp.WaitVisible(chromedp.CSS(card)))
	return req, card, done
}

// workdir is a temporary directory holding the directory path (its
// parts joined): something for a delete to ask about.
func workdir(t testing.TB, path ...string) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(append([]string{dir}, path...)...), 0o755), "mkdir")
	return dir
}

// newSession creates console session key from the sessions page and
// waits for its composer and live stream.
func newSession(t *testing.T, ctx context.Context, f *fixture, key string) {
	t.Helper()
	step(t, ctx, "create a session",
		chromedp.Navigate(f.srv.URL+"/sessions"),
		chromedp.SendKeys(chromedp.CSS(`form.new-session input[name="key"]`), key),
		chromedp.Click(chromedp.CSS(`form.new-session button`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer input[name="line"]`)),
		chromedp.WaitVisible(chromedp.CSS("#live")),
	)
}

// compose sends line from the open session's composer, then does then
// (waits, mostly), as step what.
func compose(t *testing.T, ctx context.Context, what, line string, then ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step(t, ctx, what, append([]chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.CSS(`form.composer input[name="line"]`), line),
		chromedp.Click(chromedp.CSS(`form.composer button`)),
	}, then...)...)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the current page as a PNG in the test's artifact
// directory and returns its path.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	must(t, os.WriteFile(path, png, 0o644), "write screenshot")
	t.Logf("screenshot: %s", path)
	return path
}

// TestBrowserApprove: log in, watch a request created after the page
// loaded appear live, click Approve once, and see the waiting Shell call
// run the command and exit 0.
func TestBrowserApprove(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)

	dir := workdir(t, "x", "sub")
	_, card, done := askShell(t, f, "browser-approve", "rm -rf ./x", dir)

	step(t, ctx, "see the request appear live",
		chromedp.WaitVisible(chromedp.CSS(card)),
		chromedp.WaitNotPresent(chromedp.CSS("#pending p.empty")),
	)
	if got := text(t, ctx, "#count"); got != "1" {
		t.Errorf("pending count %q, want 1", got)
	}
	if got := text(t, ctx, card+" pre.cmd mark"); got != "rm -rf ./x" {
		t.Errorf("highlighted span %q, want %q", got, "rm -rf ./x")
	}
	if got := text(t, ctx, card+" .left"); !strings.HasSuffix(got, "left") {
		t.Errorf("time left %q", got)
	}
	step(t, ctx, "approve once", chromedp.Click(chromedp.CSS(card+` button[value="once"]`)))

	res := waitDone(t, done)
	if res.err != nil || !res.out.Allowed || res.code != 0 {
		t.Fatalf("Shell after approval: allowed=%v code=%d err=%v msg=%q", res.out.Allowed, res.code, res.err, res.out.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("./x still exists after the approved rm: %v", err)
	}
	step(t, ctx, "see the notice", chromedp.WaitVisible(chromedp.CSS("#flash")))
	if got := text(t, ctx, "#flash"); !strings.HasPrefix(got, "Approved “rm -rf ./x” once") {
		t.Errorf("notice %q", got)
	}
	step(t, ctx, "the card is gone", chromedp.WaitNotPresent(chromedp.CSS(card)))
}

// TestBrowserDeny: deny with a reason and see the reason in the waiting
// call's outcome; a screenshot of the pending page is saved (phone and
// desktop widths).
func TestBrowserDeny(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)

	dir := workdir(t, "x")
	_, card, done := seeShell(t, ctx, f, "browser-deny", "rm -rf ./x && git push -f origin main", dir)

	screenshot(t, ctx, "pending-desktop.png")
	step(t, ctx, "phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.WaitVisible(chromedp.CSS(card)))
	screenshot(t, ctx, "pending-phone.png")
	step(t, ctx, "desktop viewport", chromedp.EmulateViewport(1100, 900))

	const reason = "not on the release branch"
	step(t, ctx, "deny with a reason",
		chromedp.SendKeys(chromedp.CSS(card+` input[name="reason"]`), reason),
		chromedp.Click(chromedp.CSS(card+` button[value="deny"]`)),
	)
	res := waitDone(t, done)
	if res.out.Allowed || res.code != -1 {
		t.Fatalf("the denied command ran: allowed=%v code=%d", res.out.Allowed, res.code)
	}
	if !strings.Contains(res.out.Message, "Their reason: "+reason) {
		t.Errorf("outcome message %q lacks the reason", res.out.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Errorf("./x is gone after a denial: %v", err)
	}
	step(t, ctx, "see the notice", chromedp.WaitVisible(chromedp.CSS("#flash")))
	if got := text(t, ctx, "#flash"); !strings.Contains(got, "Denied") || !strings.Contains(got, reason) {
		t.Errorf("notice %q", got)
	}
}

// TestBrowserStaleCard: a request answered on another surface while its
// card is on screen is marked ended with how it ended and its buttons
// disabled, instead of staying live (the reference system's stale
// buttons); a late click through the server still says "nothing pending".
func TestBrowserStaleCard(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)
	req, card, done := seeShell(t, ctx, f, "browser-stale", "rm -rf ./nothing", t.TempDir())

	if _, err := f.broker.Resolve(t.Context(), req.ID, broker.Answer{Approve: false, By: "alice", Surface: "terminal", Reason: "answered elsewhere"}); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done)
	step(t, ctx, "the card says how it ended",
		chromedp.WaitVisible(chromedp.CSS(card+".ended .ended-note")),
		chromedp.WaitVisible(chromedp.CSS(card+` button[value="once"][disabled]`)),
	)
	if got := text(t, ctx, card+" .ended-note"); got != "Denied by alice on terminal: answered elsewhere." {
		t.Errorf("ended note %q", got)
	}
	if r, _ := f.db.GetRequest(t.Context(), req.ID); r.State != store.Denied {
		t.Fatalf("state %s", r.State)
	}
}

// TestBrowserComposer: create a web session, run a dangerous command from
// its composer, approve it in the session's own queue (for the session,
// as a prefix), and watch the run finish live; then the grants and audit
// pages show the result. Screenshots of each page are saved.
func TestBrowserComposer(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)
	newSession(t, ctx, f, "phone")
	// A force kill (of no process): a class where a prefix grant is
	// offered. (A recursive delete gets none; see TestBrowserBadges.)
	compose(t, ctx, "run a dangerous command", "!pkill -9 wdnoproc1; true",
		chromedp.WaitVisible(chromedp.CSS("#queue article.card")),
		chromedp.WaitVisible(chromedp.CSS("#runs article.run.running")),
	)
	screenshot(t, ctx, "session-waiting.png")
	step(t, ctx, "approve for the session, as a prefix",
		chromedp.Click(chromedp.CSS(`#queue article.card input[name="grain"][value="prefix"]`)),
		chromedp.Click(chromedp.CSS(`#queue article.card button[value="session"]`)),
		chromedp.WaitVisible(chromedp.CSS("#runs article.run.done")),
		chromedp.WaitNotPresent(chromedp.CSS("#queue article.card")),
	)
	if got := text(t, ctx, "#runs article.run.done .state"); got != "exit 0" {
		t.Errorf("run state %q", got)
	}
	// The grant covers the next such kill at once: no question.
	compose(t, ctx, "run again", "!pkill -9 wdnoproc2; true",
		chromedp.WaitVisible(chromedp.CSS(`#runs article.run.done:nth-child(2)`)),
	)
	if p, _ := f.broker.Pending(t.Context(), "phone"); len(p) != 0 {
		t.Errorf("the prefix grant did not cover the second kill: %d pending", len(p))
	}
	screenshot(t, ctx, "session-done.png")

	step(t, ctx, "grants page", chromedp.Navigate(f.srv.URL+"/grants"), chromedp.WaitVisible(chromedp.CSS("code.pattern")))
	if got := text(t, ctx, "code.pattern"); got != "pkill -9 *" {
		t.Errorf("grant pattern %q", got)
	}
	screenshot(t, ctx, "grants.png")
	step(t, ctx, "verify the audit chain",
		chromedp.Navigate(f.srv.URL+"/audit"),
		chromedp.Click(chromedp.CSS("form.verify button")),
		chromedp.WaitVisible(chromedp.CSS("#flash")),
	)
	if got := text(t, ctx, "#flash"); !strings.HasPrefix(got, "Audit chain verified:") {
		t.Errorf("verify notice %q", got)
	}
	screenshot(t, ctx, "audit.png")
}

// TestBrowserElicitation: an MCP server's question appears live as a
// form; the human fills it in and submits, and the waiting Ask gets
// accept with the typed content. A screenshot of the card is saved.
func TestBrowserElicitation(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)

	schema := `{"type":"object","properties":{
		"count":{"type":"integer","title":"How many files","minimum":1,"maximum":9},
		"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
		"force":{"type":"boolean","title":"Force"},
		"note":{"type":"string","title":"Note","description":"optional"}},"required":["count","size"]}`
	req, final := f.elicitAsync(t.Context(), "browser-elicit", store.Elicitation{
		Server: "files", Message: "Delete files in /srv/x?\n<b>Careful</b>", Schema: []byte(schema),
	})
	card := "#req-" + req.ID
	step(t, ctx, "see the question appear live", chromedp.WaitVisible(chromedp.CSS(card+" form.elicit")))
	if got := text(t, ctx, card+" .elicit-message"); got != "Delete files in /srv/x?\n<b>Careful</b>" {
		t.Errorf("message %q", got)
	}
	screenshot(t, ctx, "elicitation.png")
	step(t, ctx, "fill in and submit",
		chromedp.SendKeys(chromedp.CSS(card+` input[name="f.count"]`), "4"),
		chromedp.SetValue(chromedp.CSS(card+` select[name="f.size"]`), "l"),
		chromedp.Click(chromedp.CSS(card+` input[name="f.force"]`)),
		chromedp.SendKeys(chromedp.CSS(card+` input[name="f.note"]`), "ok by me"),
		chromedp.Click(chromedp.CSS(card+` button[value="accept"]`)),
	)
	var r store.Request
	select {
	case r = <-final:
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting Ask did not return")
	}
	act, content := broker.ElicitOutcome(r)
	if act != broker.ElicitAccept || string(content) != `{"count":4,"force":true,"note":"ok by me","size":"l"}` {
		t.Fatalf("outcome %s %s", act, content)
	}
	step(t, ctx, "see the notice", chromedp.WaitVisible(chromedp.CSS("#flash")))
	if got := text(t, ctx, "#flash"); got != "Sent your answer to the question of MCP server “files”." {
		t.Errorf("notice %q", got)
	}
	step(t, ctx, "the card is gone", chromedp.WaitNotPresent(chromedp.CSS(card)))
}

// TestBrowserAgentComposer: a message to the agent whose tool call needs
// approval: the card appears in the session's queue, the transcript
// links it, approving it lets the command run, and the reply appears
// live. A screenshot of the finished transcript is saved.
func TestBrowserAgentComposer(t *testing.T) {
	m := newFakeModel(t, terminalModel)
	f := newFixture(t, fixtureOptions{agent: true, model: m.client()})
	ctx := browse(t, f)
	newSession(t, ctx, f, "agent")
	compose(t, ctx, "ask the agent", "run: rm -rf ./nothing-here",
		chromedp.WaitVisible(chromedp.CSS("#queue article.card")),
		chromedp.WaitVisible(chromedp.CSS("#runs article.run.agent.running li.pending a")),
	)
	step(t, ctx, "approve once",
		chromedp.Click(chromedp.CSS(`#queue article.card button[value="once"]`)),
		chromedp.WaitVisible(chromedp.CSS("#runs article.run.agent.done .reply")),
	)
	// The live list may swap the run's node between finding and reading
	// it (the page reloaded after the answer and catches up), so read
	// until it holds still.
	eventually(t, "the reply", func() (bool, string) {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		got, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("#runs article.run.agent.done .reply")))
		return err == nil && got == "done:", fmt.Sprint(got, err)
	})
	screenshot(t, ctx, "agent-transcript.png")
}

// TestBrowserBadgeConfirmCountdown: a card wears its risk badge and
// offers no prefix for a recursive delete; "Always" opens a
// confirmation and answers nothing until confirmed; a card that ended
// stops counting down.
func TestBrowserBadgeConfirmCountdown(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)
	dir := workdir(t, "x")
	req, card, done := seeShell(t, ctx, f, "browser-always", "rm -rf ./x", dir)
	if got := text(t, ctx, card+" .risk"); got != "dangerous" {
		t.Errorf("badge %q", got)
	}
	if radios := eval[int](t, ctx, `document.querySelectorAll("`+card+` input[value=prefix]").length`); radios != 0 {
		t.Errorf("a prefix grant is offered for rm -rf")
	}
	// The confirming button is hidden until "Always…" is opened, and
	// opening it answers nothing.
	if eval[bool](t, ctx, `document.querySelector("`+card+` button[value=always]").checkVisibility()`) {
		t.Error("the always button is visible before confirming")
	}
	step(t, ctx, "open always", chromedp.Click(chromedp.CSS(card+" details.always summary")),
		chromedp.WaitVisible(chromedp.CSS(card+" details.always .confirm-text")))
	if r, _ := f.db.GetRequest(t.Context(), req.ID); r.State != store.Pending {
		t.Fatalf("opening the confirmation answered it: %s", r.State)
	}
	screenshot(t, ctx, "always-confirm.png")
	step(t, ctx, "confirm always", chromedp.Click(chromedp.CSS(card+` button[value="always"]`)))
	res := waitDone(t, done)
	if !res.out.Allowed {
		t.Fatalf("not allowed after confirming: %q", res.out.Message)
	}
	if r, _ := f.db.GetRequest(t.Context(), req.ID); r.Scope != store.Always {
		t.Errorf("scope %s, want always", r.Scope)
	}

	// A card that ends elsewhere stops its countdown.
	req, card, done = seeShell(t, ctx, f, "browser-ended", "rm -rf ./nothing", dir)
	if _, err := f.broker.Resolve(t.Context(), req.ID, broker.Answer{Approve: false, By: "alice", Surface: "terminal"}); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done)
	step(t, ctx, "the card ended", chromedp.WaitVisible(chromedp.CSS(card+".ended .ended-note")))
	first := text(t, ctx, card+" .left")
	step(t, ctx, "a countdown tick later", chromedp.Sleep(1500*time.Millisecond))
	if second := text(t, ctx, card+" .left"); first != "ended" || second != "ended" {
		t.Errorf("time left of an ended card: %q then %q, want ended", first, second)
	}
}

// TestBrowserAuditPhone: the audit page at a phone's 390 px: no
// sideways scrolling, every field on screen and labelled.
func TestBrowserAuditPhone(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browse(t, f)
	// Records to show: a denial with a long command, and an approval.
	req, _, done := askShell(t, f, "browser-audit", "rm -rf ./a-rather-long-directory-name/with/nested/parts && git push --force origin main", t.TempDir())
	if _, err := f.broker.Resolve(t.Context(), req.ID, broker.Answer{Approve: false, By: "alice", Surface: "web", Reason: "not now, and a reason long enough to wrap on a phone screen"}); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done)
	step(t, ctx, "phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(f.srv.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit tbody tr")))
	type measure struct {
		Inner, Scroll int
		Rows          int
		Outside       []string
		Unlabelled    int
		MinFont       float64
	}
	m := eval[measure](t, ctx, `(() => {
		const w = window.innerWidth, out = [];
		let unlabelled = 0, minFont = 100;
		for (const td of document.querySelectorAll("table.audit tbody td")) {
			const r = td.getBoundingClientRect();
			if (r.width > 0 && (r.left < -1 || r.right > w + 1)) out.push(td.textContent.slice(0, 40));
			if (!td.dataset.label && !td.classList.contains("empty")) unlabelled++;
			minFont = Math.min(minFont, parseFloat(getComputedStyle(td).fontSize));
		}
		return {Inner: w, Scroll: document.documentElement.scrollWidth,
			Rows: document.querySelectorAll("table.audit tbody tr").length, Outside: out, Unlabelled: unlabelled, MinFont: minFont};
	})()`)
	screenshot(t, ctx, "audit-phone.png")
	if m.Inner != 390 || m.Scroll > m.Inner {
		t.Errorf("page %d px wide in a %d px viewport: it scrolls sideways", m.Scroll, m.Inner)
	}
	if m.Rows < 2 || len(m.Outside) > 0 || m.Unlabelled > 0 {
		t.Errorf("%d rows; cells off screen: %q; unlabelled cells: %d", m.Rows, m.Outside, m.Unlabelled)
	}
	if m.MinFont < 12 {
		t.Errorf("smallest text %.1f px", m.MinFont)
	}
	if label := eval[string](t, ctx, `getComputedStyle(document.querySelector("table.audit td[data-label=verdict]"), "::before").content`); !strings.Contains(label, "verdict") {
		t.Errorf("cell label %q", label)
	}
}
