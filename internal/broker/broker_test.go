package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type surface string

func (s surface) Surface() string { return string(s) }

func web(key string) owner.Owner {
	o, err := owner.Gateway("web", key, "")
	if err == nil {
		o, err = o.WithSession(key)
	}
	if err == nil {
		o, err = o.WithChannel(surface("web"))
	}
	if err != nil {
		panic(err)
	}
	return o
}

func openDB(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newBroker(t testing.TB, db *sqlite.DB, timeout time.Duration) *Broker {
	b := New(Options{Requests: db, Grants: db, Host: "h1", Timeout: timeout})
	t.Cleanup(func() { b.Close(context.Background(), "test over") })
	return b
}

var rm = action.NewShell("rm -rf build")

// rmAnalysis is what the gate hands the broker with rm.
var rmAnalysis = shell.Analyze("rm -rf build")

// restart is a command of a prefixable class (service.stop): a prefix
// grant may be chosen for it.
var restart = action.NewShell("systemctl restart nginx")

var restartAnalysis = shell.Analyze("systemctl restart nginx")

// askAsync asks in the background and returns the outcome channel.
func askAsync(ctx context.Context, b *Broker, q Question) <-chan store.Request {
	ch := make(chan store.Request, 1)
	go func() {
		r, err := b.Ask(ctx, q)
		if err != nil {
			r = store.Request{State: "error: " + store.State(err.Error())}
		}
		ch <- r
	}()
	return ch
}

// waitPending polls until session has n pending requests.
func waitPending(t testing.TB, b *Broker, session string, n int) []store.Request {
	t.Helper()
	for range 2000 {
		p, err := b.Pending(context.Background(), session)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == n {
			return p
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("session %s never had %d pending requests", session, n)
	return nil
}

func iterations() int {
	if os.Getenv("WARDEN_FULL") != "" {
		return 10000
	}
	return 500
}

// TestInvariant10_ARequestEndsExactlyOnce races a human's answer, the
// deadline and the asker leaving, many times: exactly one wins, the
// waiter sees that one, and a losing answer is told "nothing pending",
// never "approved".
func TestInvariant10_ARequestEndsExactlyOnce(t *testing.T) {
	db := openDB(t)
	b := newBroker(t, db, time.Millisecond)
	n := iterations()
	var answered, other atomic.Int64
	for i := range n {
		ctx, cancel := context.WithCancelCause(context.Background())
		key := fmt.Sprint("s", i)
		var id atomic.Value
		idReady := make(chan struct{})
		q := Question{Owner: web(key), Action: rm, Timeout: time.Duration(i%3) * time.Millisecond / 2,
			Notify: func(r store.Request) { id.Store(r.ID); close(idReady) }}
		done := askAsync(ctx, b, q)
		<-idReady
		var resolved store.Request
		var rerr error
		var wg sync.WaitGroup
		wg.Go(func() {
			resolved, rerr = b.Resolve(context.Background(), id.Load().(string), Answer{Approve: true, Scope: store.Once, By: "alice", Surface: "web"})
		})
		if i%2 == 0 {
			wg.Go(func() { cancel(errors.New("asker left")) })
		}
		wg.Wait()
		final := <-done
		cancel(nil)
		switch {
		case rerr == nil:
			if final.State != store.Answered || resolved.State != store.Answered {
				t.Fatalf("iteration %d: answer won but waiter saw %s", i, final.State)
			}
			answered.Add(1)
		case errors.Is(rerr, ErrNotPending):
			if final.State == store.Answered || resolved.State == store.Answered {
				t.Fatalf("iteration %d: late answer reported %s / waiter %s", i, resolved.State, final.State)
			}
			if final.State != store.Expired && final.State != store.Withdrawn {
				t.Fatalf("iteration %d: waiter saw %q", i, final.State)
			}
			other.Add(1)
		default:
			t.Fatalf("iteration %d: %v", i, rerr)
		}
	}
	t.Logf("%d iterations: %d answered, %d expired or withdrawn", n, answered.Load(), other.Load())
}

// TestLateAnswerSaysNothingPending: after the deadline the request is
// expired and an answer is refused with the row as it ended.
func TestLateAnswerSaysNothingPending(t *testing.T) {
	b := newBroker(t, openDB(t), 20*time.Millisecond)
	r, err := b.Ask(context.Background(), Question{Owner: web("s"), Action: rm})
	if err != nil || r.State != store.Expired {
		t.Fatalf("ask: %v %s", err, r.State)
	}
	late, err := b.Resolve(context.Background(), r.ID, Answer{Approve: true, By: "bob"})
	if !errors.Is(err, ErrNotPending) || late.State != store.Expired {
		t.Fatalf("late answer: %v %s", err, late.State)
	}
}

// TestCoalescing: identical concurrent questions of one session share a
// request; once covers only the first asker; session covers all.
func TestCoalescing(t *testing.T) {
	ctx := context.Background()
	b := newBroker(t, openDB(t), time.Minute)
	q := Question{Owner: web("s"), Action: rm, Analysis: rmAnalysis}
	first := askAsync(ctx, b, q)
	p := waitPending(t, b, "s", 1)
	second := askAsync(ctx, b, q)
	time.Sleep(20 * time.Millisecond)
	if p2 := waitPending(t, b, "s", 1); p2[0].ID != p[0].ID {
		t.Fatal("identical questions did not coalesce")
	}
	if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Once, By: "a"}); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.State != store.Answered {
		t.Fatalf("first: %s", r.State)
	}
	// once is once: the follower asks again.
	again := waitPending(t, b, "s", 1)
	if again[0].ID == p[0].ID {
		t.Fatal("follower inherited a once approval")
	}
	if _, err := b.Resolve(ctx, again[0].ID, Answer{Approve: false, Reason: "no", By: "a"}); err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.State != store.Denied || r.Reason != "no" {
		t.Fatalf("second: %s %q", r.State, r.Reason)
	}
	// A session approval covers every follower and records a grant.
	q = Question{Owner: web("s"), Action: restart, Analysis: restartAnalysis}
	a1, a2 := askAsync(ctx, b, q), askAsync(ctx, b, q)
	p = waitPending(t, b, "s", 1)
	time.Sleep(20 * time.Millisecond)
	if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Session, Grain: grant.Prefix, By: "a"}); err != nil {
		t.Fatal(err)
	}
	if r1, r2 := <-a1, <-a2; r1.State != store.Answered || r2.State != store.Answered {
		t.Fatalf("session approval: %s %s", r1.State, r2.State)
	}
	gs, err := b.o.Grants.Grants(ctx, "s")
	if err != nil || len(gs) != 1 || gs[0].Pattern != "systemctl restart *" || gs[0].Grain != grant.Prefix {
		t.Fatalf("grant: %v %+v", err, gs)
	}
}

// TestInvariant04_AnswersGoHome: each session's requests stay in its own
// queue; resolving one never wakes another; a session's watch sees only
// its own events.
func TestInvariant04_AnswersGoHome(t *testing.T) {
	ctx := context.Background()
	b := newBroker(t, openDB(t), time.Minute)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watchA := b.Watch(wctx, "a")
	ra, rb := askAsync(ctx, b, Question{Owner: web("a"), Action: rm}), askAsync(ctx, b, Question{Owner: web("b"), Action: rm})
	pa, pb := waitPending(t, b, "a", 1), waitPending(t, b, "b", 1)
	if _, err := b.Resolve(ctx, pa[0].ID, Answer{Approve: true, By: "x"}); err != nil {
		t.Fatal(err)
	}
	if r := <-ra; r.State != store.Answered {
		t.Fatal(r.State)
	}
	select {
	case r := <-rb:
		t.Fatalf("b woke with %s", r.State)
	case <-time.After(50 * time.Millisecond):
	}
	if p := waitPending(t, b, "b", 1); p[0].ID != pb[0].ID {
		t.Fatal("b's request changed")
	}
	b.Resolve(ctx, pb[0].ID, Answer{Approve: false, Reason: "nope", By: "y"})
	if r := <-rb; r.State != store.Denied || r.Reason != "nope" {
		t.Fatal(r.State, r.Reason)
	}
	stop()
	for e := range watchA {
		if e.Request.Session != "a" {
			t.Fatalf("a's watch saw %s's event", e.Request.Session)
		}
	}
}

func TestEndSessionWithdraws(t *testing.T) {
	ctx := context.Background()
	b := newBroker(t, openDB(t), time.Minute)
	r := askAsync(ctx, b, Question{Owner: web("s"), Action: rm})
	waitPending(t, b, "s", 1)
	if err := b.EndSession(ctx, "s", "session ended"); err != nil {
		t.Fatal(err)
	}
	if got := <-r; got.State != store.Withdrawn || got.Reason != "session ended" {
		t.Fatalf("%s %q", got.State, got.Reason)
	}
}

func TestRecoverAfterRestart(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	old := New(Options{Requests: db, Grants: db, Host: "old", Timeout: time.Minute})
	actx, abandon := context.WithCancel(ctx)
	done := askAsync(actx, old, Question{Owner: web("s"), Action: rm})
	p := waitPending(t, old, "s", 1)
	// The old host dies without ending its requests: simulate by a new
	// host recovering while the old waiter still exists in memory only.
	fresh := newBroker(t, db, time.Minute)
	n, err := fresh.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	r, err := db.GetRequest(ctx, p[0].ID)
	if err != nil || r.State != store.Withdrawn || r.Reason != "host restarted" {
		t.Fatalf("%v %s %q", err, r.State, r.Reason)
	}
	if _, err := fresh.Resolve(ctx, p[0].ID, Answer{Approve: true}); !errors.Is(err, ErrNotPending) {
		t.Fatalf("answer after restart: %v", err)
	}
	abandon()
	<-done
	old.Close(ctx, "test")
}

func TestCloseWithdrawsInFlight(t *testing.T) {
	ctx := context.Background()
	b := New(Options{Requests: openDB(t), Host: "h", Timeout: time.Minute})
	r := askAsync(ctx, b, Question{Owner: web("s"), Action: rm})
	waitPending(t, b, "s", 1)
	b.Close(ctx, "host shutting down")
	if got := <-r; got.State != store.Withdrawn || got.Reason != "host shutting down" {
		t.Fatalf("%s %q", got.State, got.Reason)
	}
	if _, err := b.Ask(ctx, Question{Owner: web("s"), Action: rm}); !errors.Is(err, ErrClosed) {
		t.Fatalf("ask after close: %v", err)
	}
}

func TestNoChannelNeverParks(t *testing.T) {
	b := newBroker(t, openDB(t), time.Minute)
	for _, o := range []owner.Owner{owner.SingleQuery(), owner.API(), {}} {
		start := time.Now()
		if _, err := b.Ask(context.Background(), Question{Owner: o, Action: rm}); !errors.Is(err, ErrNoChannel) {
			t.Fatalf("%s: %v", o, err)
		}
		if time.Since(start) > time.Second {
			t.Fatal("waited")
		}
	}
}

// TestLifecycleStateMachine drives random endings at random requests and
// checks the store's CAS against a model: the first ending wins, every
// later one is ErrNotPending with the first one's state.
func TestLifecycleStateMachine(t *testing.T) {
	db := openDB(t)
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		n := rapid.IntRange(1, 5).Draw(rt, "requests")
		ids := make([]string, n)
		model := map[string]store.State{}
		for i := range ids {
			ids[i] = fmt.Sprintf("r-%d-%d", time.Now().UnixNano(), i)
			err := db.CreateRequest(ctx, store.Request{ID: ids[i], Session: "s", Action: rm, Digest: rm.Digest(), State: store.Pending, Created: time.Now(), Deadline: time.Now().Add(time.Hour), Host: "h"})
			if err != nil {
				rt.Fatal(err)
			}
			model[ids[i]] = store.Pending
		}
		states := []store.State{store.Answered, store.Denied, store.Expired, store.Withdrawn}
		for range rapid.IntRange(1, 20).Draw(rt, "steps") {
			id := ids[rapid.IntRange(0, n-1).Draw(rt, "which")]
			to := states[rapid.IntRange(0, len(states)-1).Draw(rt, "to")]
			r, err := db.ResolveRequest(ctx, id, store.Resolution{State: to, Scope: store.Once, At: time.Now()})
			if model[id] == store.Pending {
				if err != nil || r.State != to {
					rt.Fatalf("first ending of %s to %s: %v %s", id, to, err, r.State)
				}
				model[id] = to
				continue
			}
			if !errors.Is(err, store.ErrNotPending) || r.State != model[id] {
				rt.Fatalf("second ending of %s: %v, state %s, model %s", id, err, r.State, model[id])
			}
		}
	})
}

// BenchmarkAskAnswerWake is one question's round trip in process: ask,
// answer from another goroutine, waiter wakes.
func BenchmarkAskAnswerWake(b *testing.B) {
	db := openDB(b)
	br := newBroker(b, db, time.Minute)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		q := Question{Owner: web("bench"), Action: action.NewShell(fmt.Sprint("rm -rf build", i))}
		q.Notify = func(r store.Request) {
			go br.Resolve(ctx, r.ID, Answer{Approve: true, By: "bench"})
		}
		if r, err := br.Ask(ctx, q); err != nil || r.State != store.Answered {
			b.Fatal(err, r.State)
		}
	}
}

// TestPrefixMustCoverTheCommand: a human's prefix pattern that would not
// cover the command being approved is refused, not recorded.
func TestPrefixMustCoverTheCommand(t *testing.T) {
	ctx := context.Background()
	b := newBroker(t, openDB(t), time.Minute)
	done := askAsync(ctx, b, Question{Owner: web("s"), Action: restart, Analysis: restartAnalysis})
	p := waitPending(t, b, "s", 1)
	if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Always, Grain: grant.Prefix, Pattern: "git push"}); !errors.Is(err, ErrPattern) {
		t.Fatalf("unrelated prefix: %v", err)
	}
	if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Always, Grain: grant.Prefix, Pattern: "systemctl"}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.State != store.Answered {
		t.Fatal(r.State)
	}
}

// BenchmarkPendingMemory holds 1,000 sessions each with a pending request
// and reports the host memory each one costs (waiter, goroutine, timer).
func BenchmarkPendingMemory(b *testing.B) {
	const sessions = 1000
	for b.Loop() {
		db := openDB(b)
		br := New(Options{Requests: db, Host: "h", Timeout: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var ready sync.WaitGroup
		done := make(chan struct{}, sessions)
		for i := range sessions {
			ready.Add(1)
			q := Question{Owner: web(fmt.Sprint("m", i)), Action: rm, Analysis: rmAnalysis, Notify: func(store.Request) { ready.Done() }}
			go func() { br.Ask(ctx, q); done <- struct{}{} }()
		}
		ready.Wait()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse)/sessions, "bytes/pending")
		cancel()
		for range sessions {
			<-done
		}
		br.Close(context.Background(), "bench over")
		db.Close()
	}
}

// BenchmarkAnswerToWake times only the answer: from Resolve on a pending
// request to its waiter waking (the store's CAS commit plus the wake).
func BenchmarkAnswerToWake(b *testing.B) {
	br := newBroker(b, openDB(b), time.Minute)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		created := make(chan string, 1)
		q := Question{Owner: web("bench"), Action: action.NewShell(fmt.Sprint("rm -rf x", i)), Notify: func(r store.Request) { created <- r.ID }}
		done := askAsync(ctx, br, q)
		id := <-created
		b.StartTimer()
		if _, err := br.Resolve(ctx, id, Answer{Approve: true, By: "bench"}); err != nil {
			b.Fatal(err)
		}
		<-done
	}
}

// TestNoPrefixForDestructiveClasses: a recursive delete gets no prefix
// proposal, and a prefix grant for it is refused (pattern or not), so
// one click can never grant "rm -rf *"; its exact command can still be
// approved for the session.
func TestNoPrefixForDestructiveClasses(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	b := newBroker(t, db, time.Minute)
	if p := DefaultPrefixOf(rmAnalysis); p != "" {
		t.Errorf("prefix %q proposed for rm -rf", p)
	}
	if p := DefaultPrefixOf(restartAnalysis); p != "systemctl restart" {
		t.Errorf("prefix %q for systemctl restart", p)
	}
	done := askAsync(ctx, b, Question{Owner: web("s"), Action: rm, Analysis: rmAnalysis})
	p := waitPending(t, b, "s", 1)
	for _, pattern := range []string{"", "rm -rf", "rm"} {
		if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Always, Grain: grant.Prefix, Pattern: pattern}); !errors.Is(err, ErrPattern) {
			t.Errorf("prefix %q for rm -rf: %v, want ErrPattern", pattern, err)
		}
	}
	if _, err := b.Resolve(ctx, p[0].ID, Answer{Approve: true, Scope: store.Session, Grain: grant.Exact}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.State != store.Answered {
		t.Fatal(r.State)
	}
	gs, err := db.Grants(ctx, "s")
	if err != nil || len(gs) != 1 || gs[0].Grain != grant.Exact {
		t.Errorf("grants %+v %v", gs, err)
	}
}
