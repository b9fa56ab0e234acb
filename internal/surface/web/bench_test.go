package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/store"
)

// fillPending stores n pending requests, one per web session, each a
// realistic dangerous command with its analysis (as the broker stores
// them).
func fillPending(tb testing.TB, f *fixture, n int) {
	tb.Helper()
	p, err := gate.Compile(nil, gate.Paths{})
	must(tb, err, "compile")
	now := time.Now()
	for i := range n {
		key := fmt.Sprintf("bench-%04d", i)
		o, err := f.console.webOwner(key)
		must(tb, err, "owner")
		cmd := fmt.Sprintf("cd /srv/app-%d && git push -f origin main && rm -rf ./build-%d /tmp/cache-%d", i, i, i)
		an := p.Analyse(cmd)
		aj, err := json.Marshal(an)
		must(tb, err, "analysis")
		oj, err := json.Marshal(o)
		must(tb, err, "owner json")
		act := action.NewShell(cmd)
		must(tb, f.db.CreateRequest(tb.Context(), store.Request{
			ID: fmt.Sprintf("01BENCH%019d", i), Session: key, Owner: oj, OwnerText: o.String(),
			Action: act, Digest: act.Digest(), Classes: an.Classes(), Analysis: aj, Rule: "ask.manual",
			Created: now, Deadline: now.Add(5 * time.Minute), Host: "test", State: store.Pending,
		}), "create request")
	}
}

// sessionCookie logs in through the handler with a one-time link and
// returns the session cookie.
func (f *fixture) sessionCookie(tb testing.TB) *http.Cookie {
	tb.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+f.loginLink(), nil)
	f.console.ServeHTTP(rec, req)
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == sessionCookie {
			return ck
		}
	}
	tb.Fatalf("no session cookie: %d %s", rec.Code, rec.Body)
	return nil
}

// renderPending renders the full pending page through the handler.
func renderPending(tb testing.TB, f *fixture, ck *http.Cookie) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/pending", nil)
	req.AddCookie(ck)
	f.console.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /pending: %d", rec.Code)
	}
	return rec
}

// discard is a ResponseWriter that counts and drops the body, so a
// benchmark measures rendering, not a recorder's copy.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(p []byte) (int, error) {
	d.n += len(p)
	return len(p), nil
}

// TestPendingPage1000 renders 1,000 pending requests (one per session)
// and checks every card is there with its highlight and buttons.
func TestPendingPage1000(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	fillPending(t, f, 1000)
	ck := f.sessionCookie(t)
	start := time.Now()
	body := renderPending(t, f, ck).Body.String()
	t.Logf("rendered 1,000 pending requests in %v (%d KiB)", time.Since(start), len(body)>>10)
	for name, want := range map[string]string{
		"cards":      `<article class="card"`,
		"highlights": `<mark class="dangerous"`,
		"approve":    `value="once"`,
		"deny":       `value="deny"`,
	} {
		if n := strings.Count(body, want); n < 1000 {
			t.Errorf("%s: %d, want ≥ 1000", name, n)
		}
	}
	if !strings.Contains(body, "<title>Pending (1000) · warden</title>") {
		t.Error("title does not count 1000")
	}
}

// BenchmarkPendingPage1000 is the README measurement: time to render the
// pending page with 1,000 sessions each holding a pending request,
// through the handler (store query, template, 2.5 MB of HTML). "warm"
// is every render after a request's first (its card is cached: a
// pending request does not change); "cold" decodes every request's
// analysis and highlights it again, as the first render after 1,000
// requests arrived at once would. Target: < 100 ms.
func BenchmarkPendingPage1000(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	fillPending(b, f, 1000)
	ck := f.sessionCookie(b)
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			var size int
			b.ReportAllocs()
			for b.Loop() {
				if cold {
					f.console.viewsMu.Lock()
					clear(f.console.viewCache)
					f.console.viewsMu.Unlock()
				}
				w := &discard{h: http.Header{}}
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/pending", nil)
				req.AddCookie(ck)
				f.console.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("GET /pending: %d", w.status)
				}
				size = w.n
			}
			b.ReportMetric(float64(size)/1024, "KiB/page")
		})
	}
}
