package localapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv(probeEnv); sock != "" {
		os.Exit(probeMain(sock))
	}
	goleak.VerifyTestMain(m)
}

// fakeStore keeps grants in memory; the other methods are not used by
// these tests (nil interface: calling one panics).
type fakeStore struct {
	Store
	mu     sync.Mutex
	grants map[string]grant.Grant
}

func (f *fakeStore) ListGrants(context.Context) ([]grant.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []grant.Grant
	for _, g := range f.grants {
		out = append(out, g)
	}
	return out, nil
}

func (f *fakeStore) RevokeGrant(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.grants[id]; !ok {
		return store.ErrNotFound
	}
	delete(f.grants, id)
	return nil
}

// serve runs s on a fresh socket until the test ends.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, SocketName)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	base, cancel := context.WithCancel(context.Background())
	srv := s.HTTPServer(base)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		s.Wait() // the streams that left net/http
		<-done
	})
	return path
}

// raw sends one HTTP request with the given extra header lines over the
// socket and returns the status code and body.
func raw(t *testing.T, socket, reqLines string) (int, string) {
	t.Helper()
	status, body, err := rawRequest(socket, reqLines)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

func rawRequest(socket, reqLines string) (int, string, error) {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	if _, err := fmt.Fprint(c, reqLines+"Connection: close\r\n\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String(), nil
}

func TestServeHTTPRefusesWhatABrowserSends(t *testing.T) {
	st := &fakeStore{grants: map[string]grant.Grant{}}
	sock := serve(t, New(Options{Store: st, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}}))
	tests := []struct {
		name, req string
		status    int
		body      string
	}{
		{"ok", "GET /v1/grants HTTP/1.1\r\nHost: warden.sock\r\n", 200, "[]"},
		{"origin", "GET /v1/grants HTTP/1.1\r\nHost: warden.sock\r\nOrigin: http://evil.test\r\n", 403, "browser"},
		{"referer", "GET /v1/grants HTTP/1.1\r\nHost: warden.sock\r\nReferer: http://evil.test/\r\n", 403, "browser"},
		{"rebinding host", "GET /v1/grants HTTP/1.1\r\nHost: evil.test\r\n", 403, "wrong Host"},
		{"localhost", "GET /v1/grants HTTP/1.1\r\nHost: localhost\r\n", 403, "wrong Host"},
		{"unknown path", "GET /v2/nope HTTP/1.1\r\nHost: warden.sock\r\n", 404, ""},
		{"wrong method", "POST /v1/grants HTTP/1.1\r\nHost: warden.sock\r\nContent-Length: 0\r\n", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := raw(t, sock, tt.req)
			if status != tt.status || !strings.Contains(body, tt.body) {
				t.Fatalf("status %d body %q, want %d containing %q", status, body, tt.status, tt.body)
			}
		})
	}
}

func TestServeHTTPChecksThePeer(t *testing.T) {
	st := &fakeStore{grants: map[string]grant.Grant{}}
	// A policy admitting some other uid only (and root): when the tests
	// run as root, root is admitted, so only a non-root run can see the
	// refusal over the socket; Permit itself is tested below.
	other := os.Getuid() + 1
	sock := serve(t, New(Options{Store: st, Peers: PeerPolicy{UID: other, Boundary: self()}}))
	status, body := raw(t, sock, "GET /v1/grants HTTP/1.1\r\nHost: warden.sock\r\n")
	if os.Getuid() == 0 {
		if status != 200 {
			t.Fatalf("root refused: %d %s", status, body)
		}
		return
	}
	if status != 403 || !strings.Contains(body, "may not use") {
		t.Fatalf("foreign uid admitted: %d %s", status, body)
	}
}

func TestPeerPolicyPermit(t *testing.T) {
	pp := PeerPolicy{UID: 1000, Boundary: self()}
	for _, tt := range []struct {
		uid int
		ok  bool
	}{{1000, true}, {0, true}, {1001, false}, {65534, false}} {
		if _, err := pp.Permit(Peer{UID: tt.uid, PID: os.Getpid()}); (err == nil) != tt.ok {
			t.Errorf("uid %d: %v", tt.uid, err)
		}
	}
}

func TestPeerCredentialsComeFromTheKernel(t *testing.T) {
	got := make(chan Peer, 1)
	s := New(Options{Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})
	s.mux.HandleFunc("GET /test/peer", func(w http.ResponseWriter, r *http.Request) {
		p, err := peerFrom(r.Context())
		if err != nil {
			t.Error(err)
		}
		got <- p
	})
	sock := serve(t, s)
	raw(t, sock, "GET /test/peer HTTP/1.1\r\nHost: warden.sock\r\n")
	p := <-got
	if p.UID != os.Getuid() || p.PID != os.Getpid() || p.GID != os.Getgid() {
		t.Fatalf("peer %+v, want uid %d gid %d pid %d", p, os.Getuid(), os.Getgid(), os.Getpid())
	}
	// A context that did not come through a socket connection has no
	// peer, and is refused.
	if _, err := peerFrom(context.Background()); !errors.Is(err, errNoPeer) {
		t.Fatalf("no peer: %v", err)
	}
}

func TestListen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SocketName)
	// A stale socket file (nothing listening) is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	ln, err := Listen(path)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	// A live one is not.
	if _, err := Listen(path); !errors.Is(err, ErrInUse) {
		t.Fatalf("second listener: %v, want ErrInUse", err)
	}
	ln.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket not removed on close: %v", err)
	}
}

func TestClientNotRunning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SocketName)
	c := NewClient(path)
	defer c.Close()
	_, err := c.Approvals(t.Context())
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no socket: %v", err)
	}
	want := "warden is not running (no socket at " + path + "); start it with `warden serve`"
	if nr, ok := errors.AsType[*NotRunningError](err); !ok || nr.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	_, err = c.Grants(t.Context())
	if nr, ok := errors.AsType[*NotRunningError](err); !ok || !nr.Stale {
		t.Fatalf("stale socket: %v", err)
	}
}

// TestGrantIDs: grant ids carry the pattern (spaces, slashes, "*"), and
// still name one grant through the path.
func TestGrantIDs(t *testing.T) {
	ids := []string{"01J:exact:rm -rf /tmp/x", "01J:prefix:git push *", "01J:class:delete.recursive", "a%2Fb?c#d"}
	st := &fakeStore{grants: map[string]grant.Grant{}}
	for _, id := range ids {
		st.grants[id] = grant.Grant{ID: id}
	}
	c := NewClient(serve(t, New(Options{Store: st, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})))
	defer c.Close()
	for _, id := range ids {
		if err := c.Revoke(t.Context(), id); err != nil {
			t.Fatalf("revoke %q: %v", id, err)
		}
	}
	if len(st.grants) != 0 {
		t.Fatalf("left: %v", st.grants)
	}
	err := c.Revoke(t.Context(), "nope")
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no grant nope") {
		t.Fatalf("unknown grant: %v", err)
	}
}

func TestLateMessage(t *testing.T) {
	for _, tt := range []struct {
		r    store.Request
		want string
	}{
		{store.Request{State: store.Expired}, "nothing pending — it had expired"},
		{store.Request{State: store.Answered, Scope: store.Once, By: "alice", Surface: "web"}, "nothing pending — it was already answered: approved (once) by alice on web"},
		{store.Request{State: store.Denied, By: "bob"}, "nothing pending — it was already answered: denied by bob"},
		{store.Request{State: store.Withdrawn, Reason: "host restarted"}, "nothing pending — it was withdrawn (host restarted)"},
	} {
		if got := LateMessage(tt.r); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.r.State, got, tt.want)
		}
		if strings.Contains(LateMessage(tt.r), "approved") && tt.r.State != store.Answered {
			t.Errorf("%s reported as approved", tt.r.State)
		}
	}
}

func TestValidApproval(t *testing.T) {
	for _, tt := range []struct {
		a  broker.Answer
		ok bool
	}{
		{broker.Answer{}, true},
		{broker.Answer{Scope: store.Session, Grain: grant.Prefix, Pattern: "git push"}, true},
		{broker.Answer{Scope: store.Always, Grain: grant.Class}, true},
		{broker.Answer{Scope: "forever"}, false},
		{broker.Answer{Scope: store.Session, Grain: "word"}, false},
		{broker.Answer{Scope: store.Once, Grain: grant.Class}, false},
		{broker.Answer{Scope: store.Session, Pattern: "git"}, false},
		{broker.Answer{Scope: store.Session, Grain: grant.Prefix, Pattern: " * "}, false},
		{broker.Answer{Scope: store.Session, Grain: grant.Prefix, Pattern: "git * push"}, false},
	} {
		if err := validApproval(tt.a); (err == nil) != tt.ok {
			t.Errorf("%+v: %v", tt.a, err)
		}
	}
}

func TestAnsweredBy(t *testing.T) {
	id := Identity{Peer: Peer{UID: 4242, PID: 17}, Outside: ancestry.Outside{PIDDepth: 1, Inodes: true}}
	if got := answeredBy("", id); got != "uid 4242 pid 17 via admin socket, outside sandboxes" {
		t.Errorf("no label: %q", got)
	}
	// The client's label follows the proof, as its own words: it can
	// neither come first nor close the quote early.
	if got := answeredBy(" ops\" \x1b[31m ", id); got != `uid 4242 pid 17 via admin socket, outside sandboxes (client says "ops [31m")` {
		t.Errorf("label: %q", got)
	}
}

func TestEventBytes(t *testing.T) {
	e := Event{B64: "/wA="}
	b, err := e.Bytes()
	if err != nil || string(b) != "\xff\x00" {
		t.Fatalf("%q %v", b, err)
	}
}

// deadlineStore holds one request that is still pending in the store
// although its deadline has passed (its waiter's timer has not fired).
type deadlineStore struct {
	fakeStore
	r store.Request
}

func (d *deadlineStore) GetRequest(_ context.Context, id string) (store.Request, error) {
	if id != d.r.ID {
		return store.Request{}, store.ErrNotFound
	}
	return d.r, nil
}

// TestAnswerPastTheDeadline: an answer that arrives after the deadline is
// "nothing pending — it had expired", even before the waiter expires the
// request; it never reaches the broker to be counted as approved.
func TestAnswerPastTheDeadline(t *testing.T) {
	now := time.Now()
	st := &deadlineStore{r: store.Request{ID: "R1", State: store.Pending, Deadline: now.Add(-time.Millisecond)}}
	// A nil broker: reaching it would panic.
	c := NewClient(serve(t, New(Options{Store: st, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}, Now: func() time.Time { return now }})))
	defer c.Close()
	_, err := c.Approve(t.Context(), "R1", ApproveRequest{})
	apiErr, ok := errors.AsType[*APIError](err)
	if !ok || apiErr.Status != http.StatusConflict || apiErr.State != store.Expired || !strings.Contains(err.Error(), "nothing pending — it had expired") {
		t.Fatalf("late approve: %v", err)
	}
	if !errors.Is(err, store.ErrNotPending) {
		t.Fatal("a late answer must match store.ErrNotPending")
	}
	if _, err := c.Deny(t.Context(), "R2", DenyRequest{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown request: %v", err)
	}
}

// self is the admin boundary of a host that is this test process: the
// test's own client connections pass it (the host is not its own
// descendant).
func self() ancestry.Boundary { return ancestry.Boundary{Host: os.Getpid()} }

func TestPeerPolicyBoundary(t *testing.T) {
	// The zero Boundary refuses every peer: it knows no host.
	if _, err := (PeerPolicy{UID: os.Getuid()}).Permit(Peer{UID: os.Getuid(), PID: os.Getpid()}); err == nil {
		t.Error("zero boundary admitted a peer")
	}
	// A child of the host is an agent's process.
	cmd := exec.Command("sleep", "10")
	cmd.Env = []string{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_, err := PeerPolicy{UID: os.Getuid(), Boundary: self()}.Permit(Peer{UID: os.Getuid(), PID: cmd.Process.Pid})
	if !errors.Is(err, ancestry.ErrAgentProcess) {
		t.Errorf("child of the host: %v, want ErrAgentProcess", err)
	}
}
