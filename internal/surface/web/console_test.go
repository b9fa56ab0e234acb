package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/surface"
)

// The console is the host's surface and the web sessions' channel.
var (
	_ surface.Host = (*hostsurface.Surface)(nil)
	_ Store        = (*sqlite.DB)(nil)
)

func TestLogin(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.client()

	r := c.get("/pending")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login?next=%2Fpending") {
		t.Fatalf("GET /pending without login: %d %s, want 303 to /login", r.status, r.header.Get("Location"))
	}
	if r := c.get("/pending/list"); r.status != http.StatusUnauthorized {
		t.Errorf("fragment without login: %d, want 401", r.status)
	}
	if r := c.post("/pending/x/answer", url.Values{"decision": {"once"}}); r.status != http.StatusUnauthorized {
		t.Errorf("POST without login: %d, want 401", r.status)
	}

	if r := c.get("/login"); r.status != http.StatusOK || !strings.Contains(r.body, "warden console") || strings.Contains(r.body, "<form") {
		t.Errorf("login page: %d %q; want how to get a link, and no form to type a secret into", r.status, r.body)
	}
	if r := c.visit("/login/wdl_not-a-link"); r.status != http.StatusForbidden || !strings.Contains(r.body, "not valid") {
		t.Fatalf("made-up link: %d %q", r.status, r.body)
	}
	link := f.loginLink()
	r = c.visit(link)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/pending" {
		t.Fatalf("login: %d to %q", r.status, r.header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			session = ck
		}
	}
	if session == nil {
		t.Fatal("login set no session cookie")
	}
	if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/", session)
	}
	if strings.Contains(session.Value, strings.TrimPrefix(link, "/login/")) || !strings.HasPrefix(session.Value, "wds_") {
		t.Errorf("session cookie %q: want a session secret of its own, not the link's", session.Value)
	}
	if c.csrf == "" {
		t.Fatal("no CSRF token on the page after login")
	}
	if r := c.get("/pending"); r.status != http.StatusOK || !strings.Contains(r.body, "Nothing pending.") {
		t.Fatalf("GET /pending after login: %d %q", r.status, r.body)
	}

	// A reverse proxy's Basic auth header does not hide the cookie.
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/pending/list", nil)
	req.Header.Set("Authorization", "Basic cHJveHk6cHJveHk=")
	if r := c.do(req); r.status != http.StatusOK {
		t.Errorf("cookie with a proxy's Basic header: %d", r.status)
	}

	// Log out: the cookie stops working, even if replayed.
	if r := c.post("/logout", nil); r.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", r.status)
	}
	replay := f.client()
	u, _ := url.Parse(f.srv.URL)
	replay.hc.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: session.Value}})
	if r := replay.get("/pending/list"); r.status != http.StatusUnauthorized {
		t.Errorf("replayed cookie after logout: %d, want 401", r.status)
	}
}

// TestLoginLink: a link logs in once; a second visit (another browser
// that got hold of it, a replay) is refused; a link past its lifetime is
// refused; a revoked session and a session past its lifetime are logged
// out.
func TestLoginLink(t *testing.T) {
	var clock atomicTime
	clock.set(time.Now())
	f := newFixture(t, fixtureOptions{now: clock.get})
	link := f.loginLink()
	c := f.client()
	if r := c.visit(link); r.status != http.StatusSeeOther {
		t.Fatalf("first visit: %d %q", r.status, r.body)
	}
	if r := c.get("/pending"); r.status != http.StatusOK {
		t.Fatalf("logged in: %d", r.status)
	}
	thief := f.client()
	if r := thief.visit(link); r.status != http.StatusForbidden || !strings.Contains(r.body, "used already") {
		t.Fatalf("second visit: %d %q, want 403", r.status, r.body)
	}
	if r := thief.get("/pending/list"); r.status != http.StatusUnauthorized {
		t.Fatalf("the second visitor is logged in: %d", r.status)
	}

	// Expiry: a link not used within its lifetime is refused.
	late := f.loginLink()
	clock.set(clock.get().Add(credential.DefaultLoginTTL + time.Second))
	if r := f.client().visit(late); r.status != http.StatusForbidden {
		t.Fatalf("expired link: %d, want 403", r.status)
	}

	// Revocation (warden console revoke ID) ends the session at once.
	sessions, err := f.creds.List(t.Context(), store.ConsoleSession)
	must(t, err, "list sessions")
	if len(sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(sessions))
	}
	must(t, f.creds.Revoke(t.Context(), store.ConsoleSession, sessions[0].ID), "revoke")
	if r := c.get("/pending/list"); r.status != http.StatusUnauthorized {
		t.Fatalf("revoked session: %d, want 401", r.status)
	}

	// A session lasts its lifetime, then is logged out.
	d := f.loggedIn()
	if r := d.get("/pending/list"); r.status != http.StatusOK {
		t.Fatalf("new login: %d", r.status)
	}
	clock.set(clock.get().Add(credential.DefaultSessionTTL))
	if r := d.get("/pending/list"); r.status != http.StatusUnauthorized {
		t.Fatalf("expired session: %d, want 401", r.status)
	}
}

// TestSessionSurvivesRestart: a console session lives in the store, so a
// new console on the same store (a restarted host) keeps the login.
func TestSessionSurvivesRestart(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	again, err := New(Options{Host: f.host, Store: f.db, Credentials: &credential.Service{Store: f.db}})
	must(t, err, "new console")
	defer again.Close()
	srv := httptest.NewServer(again)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/pending/list", nil)
	u, _ := url.Parse(f.srv.URL)
	for _, ck := range c.hc.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	if r := c.do(req); r.status != http.StatusOK {
		t.Fatalf("the login after a restart: %d", r.status)
	}
}

// TestTokenScopes: a read token reads but cannot answer; an approve
// token answers once but cannot record an always-grant or switch yolo;
// a revoked token is refused; an answer records the token that gave it.
func TestTokenScopes(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	issue := func(scope credential.Scope) string {
		tok, err := f.creds.IssueToken(t.Context(), string(scope)+" bot", []credential.Scope{scope}, 0, "uid 1000 pid 7 via admin socket, outside sandboxes")
		must(t, err, "issue token")
		return tok.Secret
	}
	read, approve := issue(credential.Read), issue(credential.Approve)
	do := func(tok, method, path, form string) (int, string) {
		req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(form))
		req.Header.Set("Authorization", "Bearer "+tok)
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		r := f.client().do(req)
		return r.status, r.body
	}
	pending, done := f.shellAsync(ctx, "scoped", "rm -rf ./x", t.TempDir())
	req := waitRequest(t, pending, done)

	if s, _ := do(read, http.MethodGet, "/pending/list", ""); s != http.StatusOK {
		t.Errorf("read token reads: %d", s)
	}
	if s, body := do(read, http.MethodPost, "/pending/"+req.ID+"/answer", "decision=once"); s != http.StatusForbidden || !strings.Contains(body, "needs approve") {
		t.Errorf("read token answers: %d %q, want 403", s, body)
	}
	if s, body := do(approve, http.MethodPost, "/pending/"+req.ID+"/answer", "decision=always"); s != http.StatusForbidden || !strings.Contains(body, "admin") {
		t.Errorf("approve token records an always-grant: %d %q, want 403", s, body)
	}
	if s, _ := do(approve, http.MethodPost, "/sessions/scoped/yolo", "on=true"); s != http.StatusForbidden {
		t.Errorf("approve token switches yolo: %d, want 403", s)
	}
	if p, _ := f.broker.Pending(t.Context(), "scoped"); len(p) != 1 {
		t.Fatalf("the request did not stay pending: %d", len(p))
	}
	if s, body := do(approve, http.MethodPost, "/pending/"+req.ID+"/answer", "decision=once"); s != http.StatusOK {
		t.Fatalf("approve token answers once: %d %q", s, body)
	}
	res := waitDone(t, done)
	if !res.out.Allowed {
		t.Fatalf("not allowed after the answer: %+v", res.out)
	}
	ended, err := f.db.GetRequest(t.Context(), req.ID)
	must(t, err, "get request")
	if !strings.HasPrefix(ended.By, "api token ") || !strings.Contains(ended.By, `"approve bot" [approve]`) || !strings.Contains(ended.By, "by uid 1000 pid 7 via admin socket") {
		t.Errorf("answered by %q: want the token and who created it", ended.By)
	}
	ds, err := f.db.Decisions(t.Context(), store.AuditFilter{Session: "scoped"})
	must(t, err, "audit")
	if len(ds) == 0 || ds[len(ds)-1].By != ended.By {
		t.Errorf("audit answerer: %+v, want %q", ds, ended.By)
	}

	// Revoked: refused at once.
	toks, err := f.creds.List(t.Context(), store.APIToken)
	must(t, err, "list tokens")
	for _, tk := range toks {
		if tk.Name == "read bot" {
			must(t, f.creds.Revoke(t.Context(), store.APIToken, tk.ID), "revoke")
		}
	}
	if s, _ := do(read, http.MethodGet, "/pending/list", ""); s != http.StatusUnauthorized {
		t.Errorf("revoked token: %d, want 401", s)
	}
}

func TestBearer(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	get := func(auth string) int {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/pending", nil)
		req.Header.Set("Authorization", auth)
		resp, err := f.client().hc.Do(req)
		must(t, err, "get")
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("Bearer " + f.adminToken); s != http.StatusOK {
		t.Errorf("right bearer token: %d", s)
	}
	if s := get("Bearer " + f.adminToken + "x"); s != http.StatusUnauthorized {
		t.Errorf("wrong bearer token: %d, want 401", s)
	}
	if s := get("Basic " + f.adminToken); s != http.StatusSeeOther {
		t.Errorf("basic scheme (a proxy's, not ours): %d, want 303 to the login page", s)
	}
	// A login link is not a token.
	if s := get("Bearer " + strings.TrimPrefix(f.loginLink(), "/login/")); s != http.StatusUnauthorized {
		t.Errorf("a login link as a bearer token: %d, want 401", s)
	}
}

func TestCSRFRejected(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pending, done := f.shellAsync(ctx, "csrf", "rm -rf ./x", t.TempDir())
	req := waitRequest(t, pending, done)

	c := f.loggedIn()
	for name, form := range map[string]url.Values{
		"missing": {"decision": {"once"}, "csrf": nil},
		"empty":   {"decision": {"once"}, "csrf": {""}},
		"wrong":   {"decision": {"once"}, "csrf": {c.csrf + "x"}},
	} {
		r := c.post("/pending/"+req.ID+"/answer", form)
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
			t.Errorf("%s CSRF token: %d %q, want 403", name, r.status, r.body)
		}
	}
	// Another login's token is not this one's.
	other := f.loggedIn()
	if r := c.post("/pending/"+req.ID+"/answer", url.Values{"decision": {"once"}, "csrf": {other.csrf}}); r.status != http.StatusForbidden {
		t.Errorf("another session's CSRF token: %d, want 403", r.status)
	}
	for _, p := range []string{"/sessions", "/grants/revoke", "/audit/verify", "/logout"} {
		if r := c.post(p, url.Values{"csrf": nil}); r.status != http.StatusForbidden {
			t.Errorf("POST %s without CSRF: %d, want 403", p, r.status)
		}
	}
	if p, _ := f.broker.Pending(t.Context(), "csrf"); len(p) != 1 {
		t.Fatalf("the request did not stay pending: %d pending", len(p))
	}
}

func TestCrossOriginRejected(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	form := url.Values{"key": {"x-origin"}}
	for _, h := range [][]string{
		{"Origin", "http://evil.example"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"}, // another port on localhost is another origin
	} {
		if r := c.post("/sessions", form, h...); r.status != http.StatusForbidden {
			t.Errorf("POST with %s: %s: %d, want 403", h[0], h[1], r.status)
		}
	}
	if _, err := f.db.GetSession(t.Context(), "x-origin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a cross-origin POST created a session: %v", err)
	}
	// Same origin passes.
	if r := c.post("/sessions", form, "Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin"); r.status != http.StatusSeeOther {
		t.Errorf("same-origin POST: %d %q, want 303", r.status, r.body)
	}
}

func TestBadHostRejected(t *testing.T) {
	f := newFixture(t, fixtureOptions{hosts: []string{"console.example"}})
	c := f.client()
	_, port, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	get := func(host string) int {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/login", nil)
		req.Host = host
		return c.do(req).status
	}
	for _, h := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.evil.example", "10.1.2.3:" + port} {
		if s := get(h); s != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: %d, want 421", h, s)
		}
	}
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port, "console.example", "console.example:443"} {
		if s := get(h); s != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", h, s)
		}
	}
	// A rebinding page cannot post either, even with a stolen token.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/sessions", strings.NewReader("key=k"))
	req.Host = "evil.example:" + port
	req.Header.Set("Authorization", "Bearer "+f.adminToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if s := c.do(req).status; s != http.StatusMisdirectedRequest {
		t.Errorf("POST with a foreign Host: %d, want 421", s)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.client()
	for _, p := range []string{"/login", "/static/console.js"} {
		r := c.get(p)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d", p, r.status)
		}
		for k, want := range map[string]string{
			"X-Frame-Options":        "DENY",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "no-referrer",
		} {
			if got := r.header.Get(k); got != want {
				t.Errorf("%s %s = %q, want %q", p, k, got, want)
			}
		}
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s CSP %q", p, csp)
		}
	}
	if r := c.get("/login"); strings.Contains(r.body, "<script>") || strings.Contains(r.body, " style=") || strings.Contains(r.body, " on") && strings.Contains(r.body, "onclick") {
		t.Error("the login page has inline script or style")
	}
}

// answer posts a decision for req from a logged-in browser and returns
// the notice on the page it lands on.
func (c *client) answer(id string, form url.Values) string {
	c.t.Helper()
	return flashOf(c.follow("/pending/"+id+"/answer", form).body)
}

func TestApproveOnce(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dir := workdir(t, "x", "y")
	pending, done := f.shellAsync(t.Context(), "approve", "rm -rf ./x", dir)
	req := waitRequest(t, pending, done)

	c := f.loggedIn()
	msg := c.answer(req.ID, url.Values{"decision": {"once"}})
	if !strings.HasPrefix(msg, "Approved “rm -rf ./x” once") {
		t.Errorf("notice %q", msg)
	}
	res := waitDone(t, done)
	if res.err != nil || !res.out.Allowed || res.code != 0 {
		t.Fatalf("Shell: allowed=%v code=%d err=%v msg=%q", res.out.Allowed, res.code, res.err, res.out.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("./x still exists: %v", err)
	}
	// Who answered is the console session as proven: it, the login link
	// it came from and whom that link was issued to.
	if res.out.Request == nil || !strings.HasPrefix(res.out.Request.By, "console session ") ||
		!strings.Contains(res.out.Request.By, "issued to uid 1000 pid 4242 via admin socket, outside sandboxes") || res.out.Request.Surface != SurfaceName {
		t.Errorf("answered request %+v: want by the console session on %s", res.out.Request, SurfaceName)
	}
}

func TestDenyWithReason(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dir := workdir(t, "x")
	pending, done := f.shellAsync(t.Context(), "deny", "rm -rf ./x", dir)
	req := waitRequest(t, pending, done)

	c := f.loggedIn()
	msg := c.answer(req.ID, url.Values{"decision": {"deny"}, "reason": {"  not on a Friday\x07 "}})
	if !strings.Contains(msg, "Denied “rm -rf ./x”") || !strings.Contains(msg, "not on a Friday") {
		t.Errorf("notice %q", msg)
	}
	res := waitDone(t, done)
	if res.out.Allowed || res.code != -1 {
		t.Fatalf("denied call ran: %+v code %d", res.out, res.code)
	}
	if !strings.Contains(res.out.Message, "Their reason: not on a Friday") {
		t.Errorf("outcome message %q does not carry the reason", res.out.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Errorf("./x is gone after a denial: %v", err)
	}
}

func TestApproveSessionPrefix(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	pending, done := f.shellAsync(t.Context(), "pfx", "systemctl restart nginx", t.TempDir())
	req := waitRequest(t, pending, done)
	c := f.loggedIn()
	if p := c.get("/pending"); !strings.Contains(p.body, `name="pattern" value="systemctl restart"`) {
		t.Fatalf("the prefix is not prefilled with broker.DefaultPrefix: %s", p.body)
	}
	// A pattern with an inner star is refused and answers nothing.
	msg := c.answer(req.ID, url.Values{"decision": {"session"}, "grain": {"prefix"}, "pattern": {"systemctl * nginx"}})
	if !strings.Contains(msg, "Not answered") {
		t.Errorf("bad pattern notice %q", msg)
	}
	msg = c.answer(req.ID, url.Values{"decision": {"session"}, "grain": {"prefix"}, "pattern": {"systemctl restart *"}})
	if !strings.Contains(msg, "for session pfx, commands starting with “systemctl restart *”") {
		t.Errorf("notice %q", msg)
	}
	res := waitDone(t, done)
	if !res.out.Allowed {
		t.Fatalf("not allowed: %q", res.out.Message)
	}
	gs, err := f.db.ListGrants(t.Context())
	must(t, err, "list grants")
	if len(gs) != 1 || gs[0].Grain != grant.Prefix || gs[0].Pattern != "systemctl restart *" || gs[0].Session != "pfx" {
		t.Fatalf("grants %+v", gs)
	}

	// The grants page lists it and revokes it.
	if p := c.get("/grants"); !strings.Contains(p.body, "systemctl restart *") {
		t.Fatalf("grants page: %s", p.body)
	}
	msg = flashOf(c.follow("/grants/revoke", url.Values{"id": {gs[0].ID}}).body)
	if !strings.HasPrefix(msg, "Revoked grant") {
		t.Errorf("revoke notice %q", msg)
	}
	if gs, _ := f.db.ListGrants(t.Context()); len(gs) != 0 {
		t.Fatalf("grant not revoked: %+v", gs)
	}
	msg = flashOf(c.follow("/grants/revoke", url.Values{"id": {"nope"}}).body)
	if !strings.Contains(msg, "no grant nope") {
		t.Errorf("revoking an unknown grant: %q", msg)
	}
}

// TestLateAnswer: an answer after the request ended says "nothing
// pending" and how it ended — never "approved" (invariant 10; the
// reference system showed expired taps as approved).
func TestLateAnswer(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	o, err := f.console.webOwner("late")
	must(t, err, "owner")
	ask := func(ctx context.Context, cmd string, timeout time.Duration) (store.Request, <-chan store.Request) {
		ids := make(chan store.Request, 1)
		final := make(chan store.Request, 1)
		go func() {
			r, err := f.broker.Ask(ctx, broker.Question{Owner: broker.Notifying(o, func(r store.Request) { ids <- r }), Action: action.NewShell(cmd),
				Classes: []string{"delete.recursive"}, Rule: "ask.human", Timeout: timeout})
			if err != nil {
				r.Reason = err.Error()
			}
			final <- r
		}()
		select {
		case r := <-ids:
			return r, final
		case <-time.After(10 * time.Second):
			t.Fatal("no request")
		}
		return store.Request{}, nil
	}
	bearer := func(id, decision string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/pending/"+id+"/answer", strings.NewReader("decision="+decision))
		req.Header.Set("Authorization", "Bearer "+f.adminToken)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r := c.do(req)
		return r.status, r.body
	}
	check := func(t *testing.T, msg string, want ...string) {
		t.Helper()
		if !strings.HasPrefix(msg, "Nothing pending — ") {
			t.Errorf("late notice %q does not start with “Nothing pending — ”", msg)
		}
		if strings.Contains(strings.ToLower(msg), "approved") {
			t.Errorf("late notice %q says approved", msg)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("late notice %q lacks %q", msg, w)
			}
		}
	}

	t.Run("expired", func(t *testing.T) {
		r, final := ask(t.Context(), "rm -rf ./expired", 50*time.Millisecond)
		if got := <-final; got.State != store.Expired {
			t.Fatalf("state %s", got.State)
		}
		for _, d := range []string{"once", "session", "always"} {
			check(t, c.answer(r.ID, url.Values{"decision": {d}}), "had expired", "was not run")
		}
		status, body := bearer(r.ID, "once")
		if status != http.StatusConflict {
			t.Errorf("bearer late answer: %d, want 409", status)
		}
		check(t, strings.TrimSpace(body), "had expired")
	})
	t.Run("answered", func(t *testing.T) {
		r, final := ask(t.Context(), "rm -rf ./answered", time.Minute)
		if msg := c.answer(r.ID, url.Values{"decision": {"once"}}); !strings.HasPrefix(msg, "Approved") {
			t.Fatalf("first answer: %q", msg)
		}
		<-final
		msg := c.answer(r.ID, url.Values{"decision": {"always"}})
		check(t, msg, "was already answered by console session ", "issued to uid 1000 pid 4242 via admin socket, outside sandboxes) on web (once)")
		check(t, c.answer(r.ID, url.Values{"decision": {"deny"}}), "was already answered")
	})
	t.Run("denied", func(t *testing.T) {
		r, final := ask(t.Context(), "rm -rf ./denied", time.Minute)
		c.answer(r.ID, url.Values{"decision": {"deny"}, "reason": {"no"}})
		<-final
		check(t, c.answer(r.ID, url.Values{"decision": {"once"}}), "was already denied by console session ", "outside sandboxes) on web (reason: no)")
	})
	t.Run("withdrawn", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		r, final := ask(ctx, "rm -rf ./withdrawn", time.Minute)
		cancel(errors.New("the agent stopped"))
		if got := <-final; got.State != store.Withdrawn {
			t.Fatalf("state %s", got.State)
		}
		check(t, c.answer(r.ID, url.Values{"decision": {"once"}}), "was withdrawn (the agent stopped)")
	})
	t.Run("unknown", func(t *testing.T) {
		check(t, c.answer("01NOSUCHREQUEST", url.Values{"decision": {"once"}}), "no request 01NOSUCHREQUEST")
	})
}

func TestPendingPageRendersRequest(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	const cmd = "echo '<b>' && rm -rf ./build"
	pending, done := f.shellAsync(t.Context(), "render", cmd, t.TempDir())
	req := waitRequest(t, pending, done)
	c := f.loggedIn()
	body := c.get("/pending").body
	for _, want := range []string{
		`id="req-` + req.ID + `"`,
		"gateway:web/render,session=render",
		`<a href="/sessions/render">render</a>`,
		`<mark class="dangerous" title="delete.recursive: `,
		`>rm -rf ./build</mark>`,
		`&lt;b&gt;`, // the command is escaped
		"<code>delete.recursive</code>",
		`data-deadline="` + req.Deadline.UTC().Format(time.RFC3339) + `"`,
		`value="once"`, `value="session"`, `value="always"`, `value="deny"`,
		`name="reason"`,
		"rule <code>" + req.Rule + "</code>",
		// The badge, and "Always" behind a confirmation.
		`<span class="risk dangerous" title="matched dangerous classes of the catalogue">dangerous</span>`,
		`<details class="always"><summary>Always…</summary>`,
		"Allow this exact command for every session from now on",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pending page lacks %q", want)
		}
	}
	// A recursive delete is never offered as a prefix grant.
	if strings.Contains(body, `name="pattern"`) || strings.Contains(body, `value="prefix"`) {
		t.Error("a prefix grant is offered for rm -rf")
	}
	if !regexp.MustCompile(`data-deadline="[^"]+" title="deadline [^"]+">(\d+m \d\ds|\d+s) left</span>`).MatchString(body) {
		t.Error("no server-rendered time left")
	}
	if strings.Contains(body, "'<b>'") {
		t.Error("the command was not escaped")
	}
	// The fragment the script fetches holds the same card.
	if frag := c.get("/pending/list"); frag.status != http.StatusOK || !strings.Contains(frag.body, `data-key="`+req.ID+`"`) || strings.Contains(frag.body, "<html") {
		t.Errorf("fragment: %d %q", frag.status, frag.body)
	}
	if frag := c.get("/pending/list?session=other"); !strings.Contains(frag.body, "Nothing pending.") {
		t.Errorf("another session's fragment shows this request: %q", frag.body)
	}
	_ = done
}

// TestPendingPrefixAndBadges: a prefix grain is offered for a class
// where a prefix means something (restarting a service), and the badge
// says floor for a protected path.
func TestPendingPrefixAndBadges(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dir := t.TempDir()
	pending, done := f.shellAsync(t.Context(), "restart", "systemctl restart nginx", dir)
	req := waitRequest(t, pending, done)
	c := f.loggedIn()
	body := c.get("/pending").body
	for _, want := range []string{`id="req-` + req.ID + `"`, `name="pattern" value="systemctl restart"`, `value="prefix"`, `class="risk dangerous"`} {
		if !strings.Contains(body, want) {
			t.Errorf("restart card lacks %q", want)
		}
	}
	for _, tc := range []struct {
		classes []classView
		want    string
	}{
		{[]classView{{Key: "write.shell_rc", Tier: "dangerous"}}, RiskFloor},
		{[]classView{{Key: "read.ssh_key"}}, RiskFloor},
		{[]classView{{Key: "git.force_push", Tier: "dangerous"}}, RiskDangerous},
		{[]classView{{Key: "mcp.github"}}, RiskHuman},
		{nil, RiskHuman},
	} {
		if got, _, _ := risk(tc.classes); got != tc.want {
			t.Errorf("risk(%v) = %s, want %s", tc.classes, got, tc.want)
		}
	}
	_ = done
}

func TestHighlight(t *testing.T) {
	f := func(s, e int, tier shell.Tier) shell.Finding {
		return shell.Finding{Class: "c" + string(rune('0'+s)), Tier: tier, Span: shell.Span{Start: s, End: e}}
	}
	const in = "ab cd éf gh"
	for _, tc := range []struct {
		name     string
		findings []shell.Finding
		want     string // hits in [brackets]; é as it is sent: escaped
	}{
		{"none", nil, "ab cd \\u00e9f gh"},
		{"one", []shell.Finding{f(3, 5, shell.TierDangerous)}, "ab [cd] \\u00e9f gh"},
		{"overlap", []shell.Finding{f(0, 5, shell.TierDangerous), f(3, 9, shell.TierHardline)}, "[ab ][cd][ \\u00e9f] gh"},
		{"out of range", []shell.Finding{f(3, 99, shell.TierDangerous), f(-1, 2, shell.TierDangerous)}, "ab cd \\u00e9f gh"},
		{"inside a character", []shell.Finding{f(7, 9, shell.TierDangerous)}, "ab cd \\u00e9f gh"},
		{"empty", []shell.Finding{f(3, 3, shell.TierDangerous)}, "ab cd \\u00e9f gh"},
		{"whole", []shell.Finding{f(0, len(in), shell.TierDangerous)}, "[ab cd \\u00e9f gh]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for _, s := range highlight(in, tc.findings) {
				if s.Hit {
					b.WriteString("[" + s.Text + "]")
				} else {
					b.WriteString(s.Text)
				}
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
	segs := highlight(in, []shell.Finding{f(0, 5, shell.TierDangerous), f(3, 9, shell.TierHardline)})
	if segs[1].Tier != "hardline" || segs[0].Tier != "dangerous" || !strings.Contains(segs[1].Title, "c0") || !strings.Contains(segs[1].Title, "c3") {
		t.Errorf("overlap segments %+v", segs)
	}
}

func TestSessionsComposer(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	const key = "team/a b" // a slash and a space: the key is one escaped path segment
	page := c.follow("/sessions", url.Values{"key": {key}})
	if msg := flashOf(page.body); !strings.Contains(msg, "is ready") {
		t.Fatalf("create session: %q", msg)
	}
	row, err := f.db.GetSession(t.Context(), key)
	must(t, err, "get session")
	if row.OwnerText != "gateway:web/team%2Fa%20b,session=team%2Fa%20b" {
		t.Errorf("session owner %q", row.OwnerText)
	}
	if !strings.Contains(c.get("/sessions").body, `href="/sessions/team%2Fa%20b"`) {
		t.Error("sessions page does not link the session")
	}
	here := sessionURL(key)

	// A safe command runs at once.
	c.follow(here+"/run", url.Values{"line": {"!echo hello from web"}})
	eventually(t, "echo run done", func() (bool, string) {
		b := c.get(here + "/runs").body
		return strings.Contains(b, "exit 0") && strings.Contains(b, "hello from web"), b
	})

	// A dangerous one waits in the session's queue; answering it from
	// the session page returns there, and the run finishes.
	c.follow(here+"/run", url.Values{"line": {"!rm -rf ./nothing-here"}})
	id := f.onePending(t, "request in the queue", key)
	if p := c.get(here); !strings.Contains(p.body, `id="req-`+id+`"`) || !strings.Contains(p.body, `name="back" value="`+here+`"`) {
		t.Fatalf("session page does not show its queue: %s", p.body)
	}
	r := c.post("/pending/"+id+"/answer", url.Values{"decision": {"once"}, "back": {here}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != here {
		t.Fatalf("answer from the session page: %d to %q", r.status, r.header.Get("Location"))
	}
	eventually(t, "rm run done", func() (bool, string) {
		b := c.get(here + "/runs").body
		return strings.Count(b, "exit 0") == 2, b
	})

	// A denied one says so.
	c.follow(here+"/run", url.Values{"line": {"!rm -rf ./again"}})
	id = f.onePending(t, "second request", key)
	c.answer(id, url.Values{"decision": {"deny"}, "reason": {"enough"}})
	eventually(t, "denied run", func() (bool, string) {
		b := c.get(here + "/runs").body
		return strings.Contains(b, "not run") && strings.Contains(b, "Their reason: enough"), b
	})

	// The audit page shows the decisions, filters them, and verifies.
	a := c.get("/audit?session=" + url.QueryEscape(key) + "&verdict=deny")
	if !strings.Contains(a.body, "rm -rf ./again") || strings.Contains(a.body, "echo hello from web") {
		t.Errorf("audit filter: %s", a.body)
	}
	if a := c.get("/audit?since=nonsense"); !strings.Contains(a.body, "is not a time") {
		t.Error("a bad since is not explained")
	}
	if msg := flashOf(c.follow("/audit/verify", nil).body); !strings.HasPrefix(msg, "Audit chain verified:") {
		t.Errorf("verify: %q", msg)
	}

	// Only web sessions get a composer.
	must(t, f.db.UpsertSession(t.Context(), store.SessionRow{Key: "tg", OwnerText: "gateway:telegram/42,session=tg", Created: time.Now()}), "upsert")
	if p := c.get("/sessions/tg"); strings.Contains(p.body, `class="composer"`) {
		t.Error("a telegram session has a composer")
	}
	if r := c.post("/sessions/tg/run", url.Values{"line": {"!echo no"}}); r.status != http.StatusSeeOther {
		t.Fatalf("run in a telegram session: %d", r.status)
	} else if msg := flashOf(c.get(r.header.Get("Location")).body); !strings.Contains(msg, "not an open web session") {
		t.Errorf("run in a telegram session: %q", msg)
	}
	// And an existing non-web key is not taken over.
	if msg := flashOf(c.follow("/sessions", url.Values{"key": {"tg"}}).body); !strings.Contains(msg, "already exists") {
		t.Errorf("creating over a telegram session: %q", msg)
	}
}

func TestYoloToggle(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.inSession("y")
	msg := flashOf(c.follow("/sessions/y/yolo", url.Values{"on": {"true"}}).body)
	if on, _ := f.db.SessionYolo(t.Context(), "y"); !on || !strings.Contains(msg, "Yolo is ON") {
		t.Fatalf("yolo on: %v %q", on, msg)
	}
	c.follow("/sessions/y/yolo", url.Values{"on": {"false"}})
	if on, _ := f.db.SessionYolo(t.Context(), "y"); on {
		t.Fatal("yolo still on")
	}
}

// TestShellReset: the session page's "Reset shell" button is a
// CSRF-protected POST that clears the session's shell state; commands
// typed in the composer keep it until then.
func TestShellReset(t *testing.T) {
	f := newFixture(t, fixtureOptions{shell: true})
	c := f.inSession("sh")
	if p := c.get("/sessions/sh"); !strings.Contains(p.body, "/sessions/sh/shell/reset") {
		t.Fatal("no Reset shell button")
	}
	o, err := f.console.webOwner("sh")
	must(t, err, "owner")
	ctx := owner.With(t.Context(), o)
	var out strings.Builder
	if _, code, err := f.runner.Shell(ctx, "export FOO=bar", "", &out, &out); err != nil || code != 0 {
		t.Fatalf("export: %d %v %s", code, err, out.String())
	}
	if st, _ := f.shell.Load("sh"); st.Env["FOO"] != "bar" {
		t.Fatalf("state after export: %+v", st)
	}
	if r := c.post("/sessions/sh/shell/reset", url.Values{"csrf": {""}}); r.status != http.StatusForbidden {
		t.Fatalf("reset without CSRF: %d", r.status)
	}
	if st, _ := f.shell.Load("sh"); st.Env["FOO"] != "bar" {
		t.Fatal("a post without CSRF token reset the shell")
	}
	if msg := flashOf(c.follow("/sessions/sh/shell/reset", nil).body); !strings.Contains(msg, "was reset") {
		t.Errorf("reset: %q", msg)
	}
	if st, _ := f.shell.Load("sh"); len(st.Env) != 0 {
		t.Fatalf("state after reset: %+v", st)
	}
}

// TestEventsStream: the stream carries the broker's events and ends when
// the console closes (goleak checks nothing is left).
func TestEventsStream(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.adminToken)
	resp, err := http.DefaultClient.Do(req)
	must(t, err, "events")
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended before %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %q within 10s", prefix)
			}
		}
	}
	next(": warden") // the stream is open
	ctx, cancel := context.WithCancel(t.Context())
	pending, done := f.shellAsync(ctx, "ev", "rm -rf ./ev", t.TempDir())
	r := waitRequest(t, pending, done)
	if l := next("event: "); l != "event: created" {
		t.Fatalf("first event %q", l)
	}
	if l := next("data: "); !strings.Contains(l, `"id":"`+r.ID+`"`) || !strings.Contains(l, `"session":"ev"`) {
		t.Fatalf("created data %q", l)
	}
	cancel()
	waitDone(t, done)
	if l := next("event: "); l != "event: ended" {
		t.Fatalf("second event %q", l)
	}
	if l := next("data: "); !strings.Contains(l, `"state":"withdrawn"`) || !strings.Contains(l, `"text":"Withdrawn (`) {
		t.Fatalf("ended data %q", l)
	}
	f.console.Close()
	for range lines {
	} // the stream ends
	if r := f.client().get("/login"); r.status != http.StatusOK {
		t.Errorf("pages after Close: %d", r.status)
	}
}

func TestNewRequiresCredentials(t *testing.T) {
	if _, err := New(Options{Host: &hostsurface.Surface{}, Store: nopStore{}}); err == nil {
		t.Error("New accepted a console without a credential service")
	}
}

// nopStore satisfies Store for constructor tests.
type nopStore struct{ store.Store }

// TestSessionExpires: a login lapses after SessionTTL.
func TestSessionExpires(t *testing.T) {
	var now atomicTime
	now.set(time.Now())
	f := newFixture(t, fixtureOptions{now: now.get})
	c := f.loggedIn()
	if r := c.get("/pending"); r.status != http.StatusOK {
		t.Fatalf("fresh login: %d", r.status)
	}
	now.set(now.get().Add(12*time.Hour + time.Second))
	if r := c.get("/pending"); r.status != http.StatusSeeOther {
		t.Fatalf("lapsed login: %d, want 303 to /login", r.status)
	}
}

// TestCloseWithdrawsRuns: closing the console withdraws a composer run
// that waits for an answer, with the cause, and waits for it.
func TestCloseWithdrawsRuns(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.inSession("closing")
	c.follow("/sessions/closing/run", url.Values{"line": {"!rm -rf ./nothing"}})
	r := f.closeWithPending(t, "closing")
	if r.State != store.Withdrawn || r.Reason != "web console closed" {
		t.Fatalf("request after Close: %s %q", r.State, r.Reason)
	}
	if runs := f.console.runViews("closing"); len(runs) != 1 || runs[0].State != runBlocked || !strings.Contains(runs[0].Message, "withdrawn (web console closed)") {
		t.Fatalf("run after Close: %+v", runs)
	}
	if r := c.post("/sessions/closing/run", url.Values{"line": {"!echo late"}}); r.status != http.StatusSeeOther {
		t.Fatalf("run after Close: %d", r.status)
	} else if msg := flashOf(c.get(r.header.Get("Location")).body); !strings.Contains(msg, "closing") {
		t.Errorf("run after Close: %q", msg)
	}
}

// TestEventStreamsBounded: one login holds at most MaxStreams event
// streams at once (429 beyond), and a stream ends by itself after
// StreamLifetime (the page's EventSource reconnects, authenticating
// afresh).
func TestEventStreamsBounded(t *testing.T) {
	f := newFixture(t, fixtureOptions{streamLifetime: 300 * time.Millisecond, maxStreams: 1})
	open := func() *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+f.adminToken)
		resp, err := http.DefaultClient.Do(req)
		must(t, err, "events")
		return resp
	}
	first := open()
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	second := open()
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second stream of one login: %d, want 429", second.StatusCode)
	}
	// The first ends by itself (within a bound far above its lifetime).
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, first.Body); done <- err }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream outlived its lifetime")
	}
	// Its slot is free again.
	eventually(t, "a new stream", func() (bool, string) {
		r := open()
		r.Body.Close()
		return r.StatusCode == http.StatusOK, r.Status
	})
}
