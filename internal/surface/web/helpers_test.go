package web

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/shellstate"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a console on a real store, broker, gate and runner, served
// by an httptest server on loopback.
type fixture struct {
	t       testing.TB
	db      *sqlite.DB
	broker  *broker.Broker
	runner  *runner.Runner
	host    *hostsurface.Surface
	console *Console
	srv     *httptest.Server
	// cron is the scheduler when fixtureOptions.cron is set.
	cron *cron.Scheduler
	// shell keeps the sessions' shell state when fixtureOptions.shell
	// is set.
	shell *shellstate.Manager
	// dir is the console's working directory (composer runs and the
	// agent's tools).
	dir string
	// creds issues the fixture's login links and tokens; adminToken is
	// an API token with the admin scope.
	creds      *credential.Service
	adminToken string
}

type fixtureOptions struct {
	timeout time.Duration // the broker's default wait
	hosts   []string
	now     func() time.Time // the console's clock
	cron    bool             // run a cron scheduler and give it to the console
	board   bool             // give the console the store as its kanban board
	shell   bool             // keep sessions' shell state (shellstate)
	// agent gives the console an agent with model (nil: an agent
	// without a configured model).
	agent bool
	model llm.Client
	// streamLifetime and maxStreams bound event streams (0: defaults).
	streamLifetime time.Duration
	maxStreams     int
}

// shellSessions gives a runner a shellstate.Manager.
type shellSessions struct{ m *shellstate.Manager }

func (s shellSessions) Begin(ctx context.Context, key string) runner.SessionCall {
	return s.m.Begin(ctx, key)
}

// logWriter sends log lines to the test's output.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	if fo.timeout == 0 {
		fo.timeout = time.Minute
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	term := runnertest.Terminal(t)
	ro := runnertest.Options{Ask: fo.timeout, Logger: log, Terminal: term}
	var shell *shellstate.Manager
	if fo.shell {
		var err error
		if shell, err = shellstate.New(shellstate.Options{Dir: filepath.Join(t.TempDir(), "shellstate"), Terminal: term, Logger: log}); err != nil {
			t.Fatal(err)
		}
		ro.Sessions = shellSessions{shell}
	}
	rf := runnertest.New(t, ro)
	db, b, r := rf.DB, rf.Broker, rf.Runner
	creds := &credential.Service{Store: db, Now: fo.now}
	admin, err := creds.IssueToken(ctx, "test admin", []credential.Scope{credential.Admin}, 0, "the test")
	if err != nil {
		t.Fatal(err)
	}
	p := hostsurface.Parts{Broker: b, Requests: db, Sessions: db, Runner: r, Dir: t.TempDir(), Logger: log, Now: fo.now}
	if fo.agent {
		p.Agent = agent.New(agent.Options{Model: fo.model, Exec: r, Conversations: db, Logger: log})
	}
	h := hostsurface.New(p)
	o := Options{Host: h, Store: db, Credentials: creds, Hosts: fo.hosts, Logger: log, Now: fo.now,
		StreamLifetime: fo.streamLifetime, MaxStreams: fo.maxStreams}
	if shell != nil {
		o.ShellReset = func(_ context.Context, key string) error { return shell.Reset(key) }
	}
	var sched *cron.Scheduler
	if fo.cron {
		sched = startCron(t, db, r, log, p.Dir)
		o.Cron = hostsurface.NewCron(sched, db)
	}
	if fo.board {
		o.Board = hostsurface.NewBoard(board.New(board.Options{Store: db, Now: fo.now}))
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	// Cleanups run last first: close the console (its streams and runs),
	// then the server, then the broker and the store registered above.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { c.Close() })
	return &fixture{t: t, db: db, broker: b, runner: r, host: h, console: c, srv: srv, cron: sched, shell: shell, dir: p.Dir,
		creds: creds, adminToken: admin.Secret}
}

// startCron runs a cron scheduler on db and r until the test ends
// (before the store closes).
func startCron(t testing.TB, db *sqlite.DB, r *runner.Runner, log *slog.Logger, dir string) *cron.Scheduler {
	t.Helper()
	s, err := cron.New(cron.Options{Store: db, Runner: r, Host: "test-host", Logger: log, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cron scheduler: %v", err)
		}
	})
	return s
}

// client is a browser-like client: a cookie jar, no automatic redirects.
type client struct {
	t    testing.TB
	f    *fixture
	hc   *http.Client
	csrf string
}

func (f *fixture) client() *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return &client{t: f.t, f: f, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// loggedIn is a new client logged in to the console.
func (f *fixture) loggedIn() *client {
	f.t.Helper()
	c := f.client()
	c.login()
	return c
}

// inSession is a new client logged in to the console that has created
// (or opened) console session key.
func (f *fixture) inSession(key string) *client {
	f.t.Helper()
	c := f.loggedIn()
	c.follow("/sessions", url.Values{"key": {key}})
	return c
}

// closeWithPending closes the console while session key has one
// request pending and returns that request as it stands after.
func (f *fixture) closeWithPending(t testing.TB, key string) store.Request {
	t.Helper()
	id := f.onePending(t, "pending", key)
	f.console.Close()
	r, err := f.db.GetRequest(t.Context(), id)
	must(t, err, "get request")
	return r
}

// response is a read response.
type response struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (c *client) get(path string) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.f.srv.URL+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(req)
}

// post posts a form; it adds the session's CSRF token unless form has
// one (use csrf="" explicitly by passing the key with an empty value).
func (c *client) post(path string, form url.Values, hdr ...string) response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok && c.csrf != "" {
		form.Set("csrf", c.csrf)
	}
	req, err := http.NewRequest(http.MethodPost, c.f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

// follow posts and then gets the page the post redirected to.
func (c *client) follow(path string, form url.Values) response {
	c.t.Helper()
	r := c.post(path, form)
	if r.status != http.StatusSeeOther {
		c.t.Fatalf("POST %s: status %d, want 303; body %q", path, r.status, r.body)
	}
	return c.get(r.header.Get("Location"))
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// loginLink issues a one-time login link as `warden console` would
// (over the admin socket, here in-process) and returns its path.
func (f *fixture) loginLink() string {
	f.t.Helper()
	l, err := f.creds.IssueLogin(context.Background(), "uid 1000 pid 4242 via admin socket, outside sandboxes", 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return "/login/" + l.Secret
}

// login logs in through a fresh one-time link and remembers the
// session's CSRF token. It returns the link's response (a 303 on
// success).
func (c *client) login() response {
	c.t.Helper()
	return c.visit(c.f.loginLink())
}

// visit opens a login link; on success it follows the redirect and
// remembers the session's CSRF token.
func (c *client) visit(link string) response {
	c.t.Helper()
	r := c.get(link)
	if r.status == http.StatusSeeOther {
		p := c.get(r.header.Get("Location"))
		if m := csrfRE.FindStringSubmatch(p.body); m != nil {
			c.csrf = m[1]
		}
	}
	return r
}

// flashOf returns the page's notice text.
func flashOf(body string) string {
	m := regexp.MustCompile(`(?s)<p class="flash [a-z]+" id="flash" role="status">(.*?)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// webOwnerCtx binds the web session key's owner, answered on the
// console, to ctx.
func (f *fixture) webOwnerCtx(ctx context.Context, key string) context.Context {
	f.t.Helper()
	o, err := f.console.webOwner(key)
	if err != nil {
		f.t.Fatal(err)
	}
	return owner.With(ctx, o)
}

// shellResult is what a background Runner.Shell call returned.
type shellResult struct {
	out    runner.Outcome
	code   int
	err    error
	stdout string
}

// shellAsync runs command as web session key in the background. It
// returns the pending request once the broker holds it (or fails the
// test), and the channel of the call's result.
func (f *fixture) shellAsync(ctx context.Context, key, command, dir string) (<-chan store.Request, <-chan shellResult) {
	ctx = f.webOwnerCtx(ctx, key)
	pending := make(chan store.Request, 1)
	done := make(chan shellResult, 1)
	go func() {
		var out buftest.Buffer
		o, code, err := f.runner.Shell(broker.WithNotify(ctx, func(r store.Request) {
			select {
			case pending <- r:
			default:
			}
		}), command, dir, &out, &out)
		done <- shellResult{out: o, code: code, err: err, stdout: out.String()}
	}()
	return pending, done
}

// waitRequest waits for the pending request of a background call.
func waitRequest(t testing.TB, pending <-chan store.Request, done <-chan shellResult) store.Request {
	t.Helper()
	select {
	case r := <-pending:
		return r
	case res := <-done:
		t.Fatalf("the call ended without asking: allowed=%v code=%d err=%v message=%q", res.out.Allowed, res.code, res.err, res.out.Message)
	case <-time.After(20 * time.Second):
		t.Fatal("no pending request after 20s")
	}
	return store.Request{}
}

// waitDone waits for a background call to return.
func waitDone(t testing.TB, done <-chan shellResult) shellResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting Shell call did not return within 20s")
	}
	return shellResult{}
}

// eventually polls cond until it holds.
func eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not after 20s; last: %s", what, last)
}

// onePending waits until session has exactly one pending request and
// returns its id.
func (f *fixture) onePending(t testing.TB, what, session string) string {
	t.Helper()
	var id string
	eventually(t, what, func() (bool, string) {
		p, _ := f.broker.Pending(t.Context(), session)
		if len(p) == 1 {
			id = p[0].ID
		}
		return len(p) == 1, ""
	})
	return id
}

// must fails the test on err.
func must(t testing.TB, err error, what ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprint(what...), err)
	}
}

// atomicTime is a settable clock.
type atomicTime struct {
	mu sync.Mutex
	t  time.Time
}

func (a *atomicTime) get() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.t
}

func (a *atomicTime) set(t time.Time) {
	a.mu.Lock()
	a.t = t
	a.mu.Unlock()
}
