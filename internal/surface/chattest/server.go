package chattest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fake is what every platform fake (discordtest, slacktest,
// telegramtest) is built on: a real HTTP server on a loopback port, the
// lock over the fake's state, the outage switches, the count of API
// calls by method and the changes that wake waiters. A fake embeds it
// and keeps its own state under Mu too, so that a switch and what it
// ends change together. What the fake serves on it is its platform's
// own protocol.
type Fake struct {
	// T is the test the fake serves: a misuse of the fake fails it.
	T testing.TB
	// Mu guards Down, Revoked, the calls and the embedding fake's state.
	Mu sync.Mutex
	// Down and Revoked are the outage switches: the platform is
	// unreachable, or the token is no longer valid.
	Down, Revoked bool

	name    string // the fake's package, which names it in failures
	srv     *httptest.Server
	calls   map[string]int
	changes Changes
	dump    func() string
}

// Start serves h on a loopback port for t until the test ends, when
// closeFn (the fake's Close, which ends with Stop) runs. name, the
// fake's package, prefixes its failures; dump gives its account of the
// fake's state when a wait fails.
func (f *Fake) Start(t testing.TB, name string, h http.HandlerFunc, closeFn func(), dump func() string) {
	f.T, f.name, f.dump, f.calls = t, name, dump, map[string]int{}
	f.srv = httptest.NewServer(h)
	t.Cleanup(closeFn)
}

// Base is the server's URL, http://127.0.0.1:PORT.
func (f *Fake) Base() string { return f.srv.URL }

// WebSocketURL is the server's URL for a websocket, ws://127.0.0.1:PORT.
func (f *Fake) WebSocketURL() string { return "ws" + strings.TrimPrefix(f.srv.URL, "http") }

// Hangup ends every client's connection to the server, as an outage
// does; clients may connect again.
func (f *Fake) Hangup() { f.srv.CloseClientConnections() }

// Stop ends the server and every connection to it: the last step of a
// fake's Close.
func (f *Fake) Stop() {
	f.Hangup()
	f.srv.Close()
}

// Switch sets an outage switch (&f.Down or &f.Revoked) and wakes
// waiters; turning one on first runs drop (if not nil), under Mu, to
// end the fake's live connections.
func (f *Fake) Switch(sw *bool, on bool, drop func()) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	*sw = on
	if on && drop != nil {
		drop()
	}
	f.Notify()
}

// Call counts a call of API method, wakes waiters (a test may wait for
// a call), and returns the outage switches as they stand, which decide
// how the call is answered.
func (f *Fake) Call(method string) (down, revoked bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.calls[method]++
	f.Notify()
	return f.Down, f.Revoked
}

// Calls returns how often API method was called.
func (f *Fake) Calls(method string) int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.calls[method]
}

// Notify wakes every waiter and long poll: the fake's state changed.
func (f *Fake) Notify() { f.changes.Notify() }

// Next returns a channel closed at the next change, which a long poll
// waits on.
func (f *Fake) Next() <-chan struct{} { return f.changes.current() }

// Wait waits until cond holds, checking it after every change, and
// fails the test after d with what and the fake's account of itself.
func (f *Fake) Wait(what string, d time.Duration, cond func() bool) {
	f.T.Helper()
	f.changes.Wait(f.T, f.name+": "+what, d, cond, f.dump)
}

// Pressed locks f.Mu and returns the message a button press is on: the
// last of items that ok accepts. It returns with Mu still held, so that
// the press is recorded against the message as it stands; with no such
// message it unlocks Mu and fails the test (a press on message on,
// which the fake never showed).
func Pressed[M any](f *Fake, items *[]*M, ok func(*M) bool, on string) *M {
	f.T.Helper()
	f.Mu.Lock()
	var m *M
	for _, x := range *items {
		if ok(x) {
			m = x
		}
	}
	if m == nil {
		f.Mu.Unlock()
		f.T.Fatalf("%s: click on unknown message %s", f.name, on)
	}
	return m
}
