package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// quiet fails if the stream yields any event within d: its exec is
// still waiting.
func (s *execStream) quiet(t *testing.T, name string, d time.Duration) {
	t.Helper()
	select {
	case e, ok := <-s.events:
		t.Fatalf("%s: got %+v (open %v) while it should still be waiting", name, e, ok)
	case <-time.After(d):
	}
}

// pendingIDs lists the pending requests over the admin socket as
// session → ids.
func pendingIDs(t *testing.T, th *testHost) map[string][]string {
	t.Helper()
	list, err := th.client.Approvals(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, a := range list {
		if want := "gateway:web/" + a.Session + ",session=" + a.Session; a.OwnerText != want {
			t.Errorf("request %s in session %s has owner %s, want %s", a.ID, a.Session, a.OwnerText, want)
		}
		m[a.Session] = append(m[a.Session], a.ID)
	}
	for _, ids := range m {
		slices.Sort(ids)
	}
	return m
}

func wantPending(t *testing.T, th *testHost, want map[string][]string) {
	t.Helper()
	for _, ids := range want {
		slices.Sort(ids)
	}
	got := pendingIDs(t, th)
	if len(got) != len(want) {
		t.Fatalf("pending %v, want %v", got, want)
	}
	for s, ids := range want {
		if !slices.Equal(got[s], ids) {
			t.Fatalf("pending %v, want %v", got, want)
		}
	}
}

// TestStory2_SessionsStayApart is issue 5's end-to-end story 2 at the
// host's level (real SQLite, the admin socket, real subprocesses). Two
// web sessions ask for dangerous actions at once:
//
//  1. each request sits in its own session;
//  2. approving one (for its whole session) does not release the
//     other, whose exec goes on waiting;
//  3. denying the other with a reason delivers the reason to that exec
//     only: a second request of the first session, pending meanwhile,
//     hears nothing;
//  4. session yolo on one session changes nothing for the other: the
//     other's dangerous command still asks, while the yolo session's
//     runs without asking.
func TestStory2_SessionsStayApart(t *testing.T) {
	cfg := configured(t, "approvals:\n  mode: manual\n  timeout: 600\n")
	th := startHost(t, cfg)
	ctx := t.Context()
	work := t.TempDir()
	dirA, dirB := filepath.Join(work, "a"), filepath.Join(work, "b")
	for _, d := range []string{"build", "other", "third"} {
		mkdir(t, filepath.Join(dirA, d))
		mkdir(t, filepath.Join(dirB, d))
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// 1. Concurrent requests, one per session.
	a1 := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-a", Command: "rm -rf build", Dir: dirA})
	b1 := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-b", Command: "rm -rf build", Dir: dirB})
	pa1, _ := a1.until(t, localapi.EventPending)
	pb1, _ := b1.until(t, localapi.EventPending)
	if pa1.ID == pb1.ID {
		t.Fatalf("one request %s for both sessions", pa1.ID)
	}
	wantPending(t, th, map[string][]string{"web-a": {pa1.ID}, "web-b": {pb1.ID}})
	for id, session := range map[string]string{pa1.ID: "web-a", pb1.ID: "web-b"} {
		r, err := th.st.GetRequest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Session != session || r.State != store.Pending {
			t.Fatalf("request %s: session %q state %s, want %s pending", id, r.Session, r.State, session)
		}
	}

	// 2. Approving web-a's request — for the whole session, the widest
	// answer a session can give — runs web-a's command and releases
	// nothing of web-b's, though its command is the same.
	if _, err := th.client.Approve(ctx, pa1.ID, localapi.ApproveRequest{Scope: "session"}); err != nil {
		t.Fatal(err)
	}
	if e, _ := a1.until(t, localapi.EventExit); *e.Code != 0 {
		t.Fatalf("web-a: exit %d", *e.Code)
	}
	if exists(filepath.Join(dirA, "build")) {
		t.Fatal("web-a's approved command did not run")
	}
	b1.quiet(t, "web-b", 500*time.Millisecond)
	if !exists(filepath.Join(dirB, "build")) {
		t.Fatal("web-b's command ran on web-a's approval")
	}
	wantPending(t, th, map[string][]string{"web-b": {pb1.ID}})

	// 3. web-a asks again (another command) while web-b's request is
	// denied with a reason: only web-b's exec hears it.
	a2 := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-a", Command: "rm -rf other", Dir: dirA})
	pa2, _ := a2.until(t, localapi.EventPending)
	wantPending(t, th, map[string][]string{"web-a": {pa2.ID}, "web-b": {pb1.ID}})
	const reason = "not on a Friday, web-b"
	if _, err := th.client.Deny(ctx, pb1.ID, localapi.DenyRequest{Reason: reason}); err != nil {
		t.Fatal(err)
	}
	e := b1.next(t)
	if e.Event != localapi.EventDenied || e.State != string(store.Denied) || !strings.Contains(e.Message, reason) {
		t.Fatalf("web-b after the denial: %+v, want denied with %q", e, reason)
	}
	if err := <-b1.done; err != nil {
		t.Fatalf("web-b's exec: %v", err)
	}
	if !exists(filepath.Join(dirB, "build")) {
		t.Fatal("web-b's denied command ran")
	}
	a2.quiet(t, "web-a", 500*time.Millisecond)
	if r, err := th.st.GetRequest(ctx, pa2.ID); err != nil || r.State != store.Pending || strings.Contains(r.Reason, reason) {
		t.Fatalf("web-a's request after web-b's denial: %+v %v", r, err)
	}
	wantPending(t, th, map[string][]string{"web-a": {pa2.ID}})

	// 4. Session yolo on web-a: web-a's next dangerous command runs
	// without asking; web-b's still asks, even for the very command
	// web-a was granted for its session.
	if err := th.st.SetYolo(ctx, "web-a", true); err != nil {
		t.Fatal(err)
	}
	a3 := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-a", Command: "rm -rf third", Dir: dirA})
	if e := a3.next(t); e.Event != localapi.EventExit || *e.Code != 0 {
		t.Fatalf("web-a with session yolo: first event %+v, want exit 0 without asking", e)
	}
	if exists(filepath.Join(dirA, "third")) {
		t.Fatal("web-a's yolo command did not run")
	}
	for _, cmd := range []string{"rm -rf build", "rm -rf third"} {
		b := startExec(ctx, th.client, localapi.ExecRequest{Session: "web-b", Command: cmd, Dir: dirB})
		pb, _ := b.until(t, localapi.EventPending)
		wantPending(t, th, map[string][]string{"web-a": {pa2.ID}, "web-b": {pb.ID}})
		b.quiet(t, "web-b", 300*time.Millisecond)
		if _, err := th.client.Deny(ctx, pb.ID, localapi.DenyRequest{Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		if e := b.next(t); e.Event != localapi.EventDenied {
			t.Fatalf("web-b %q: %+v, want denied", cmd, e)
		}
		if !exists(filepath.Join(dirB, strings.TrimPrefix(cmd, "rm -rf "))) {
			t.Fatalf("web-b's %q ran", cmd)
		}
	}
	// web-a's earlier request is answered as it was asked: yolo does not
	// reach back into it.
	a2.quiet(t, "web-a", 100*time.Millisecond)
	if _, err := th.client.Approve(ctx, pa2.ID, localapi.ApproveRequest{}); err != nil {
		t.Fatal(err)
	}
	if e, _ := a2.until(t, localapi.EventExit); *e.Code != 0 || exists(filepath.Join(dirA, "other")) {
		t.Fatalf("web-a's second command: exit %d", *e.Code)
	}
	wantPending(t, th, map[string][]string{})
	if res, err := th.client.Verify(ctx); err != nil || !res.OK {
		t.Fatalf("verify: %+v %v", res, err)
	}
}
