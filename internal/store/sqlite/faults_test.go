package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
)

// appendN appends n deny records.
func appendN(t *testing.T, db *DB, n int) {
	t.Helper()
	for i := range n {
		if _, err := db.AppendDecision(t.Context(), store.Decision{Verdict: "deny", Kind: action.Shell, Payload: fmt.Sprintf("rm -rf /%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// deleteNewest removes the newest n audit rows behind the store's back,
// as someone with the file and the sqlite3 shell could (dropping the
// append-only triggers first).
func deleteNewest(t *testing.T, path string, n int) {
	t.Helper()
	raw, err := sql.Open("sqlite", dsn(path, url.Values{"_pragma": {"busy_timeout(5000)"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		`DROP TRIGGER IF EXISTS audit_no_delete`,
		fmt.Sprintf(`DELETE FROM audit WHERE seq IN (SELECT seq FROM audit ORDER BY seq DESC LIMIT %d)`, n),
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// lossOf fails t unless err holds a *store.LossError, and returns it.
func lossOf(t *testing.T, what string, err error) *store.LossError {
	t.Helper()
	loss, ok := errors.AsType[*store.LossError](err)
	if !ok || !errors.Is(err, store.ErrChainBroken) {
		t.Fatalf("%s: %v, want a *store.LossError matching ErrChainBroken", what, err)
	}
	return loss
}

// TestTruncationIsNoticed: deleting the newest audit rows leaves a chain
// that verifies on its own; the store says how many are missing — the
// running handle (from its own last commit and its anchor), a reopen
// (refused: ErrAuditLoss) and an offline Verify alike.
func TestTruncationIsNoticed(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warden.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 7)
	if err := db.FlushAnchors(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := db.VerifyChain(ctx); n != 7 || err != nil {
		t.Fatalf("before: %d, %v", n, err)
	}
	deleteNewest(t, path, 3)

	n, err := db.VerifyChain(ctx)
	loss := lossOf(t, "running handle", err)
	if n != 4 || loss.Missing != 3 || loss.AnchorSeq != 7 || loss.Last != 4 || !strings.Contains(err.Error(), "3 newest record(s) missing") {
		t.Errorf("running handle: %d, %+v (%v)", n, loss, err)
	}
	// The next write notices too and the store stops: appending to the
	// shortened log would hide the loss.
	if _, err := db.AppendDecision(ctx, store.Decision{Verdict: "allow"}); !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, ErrLogShrank) {
		t.Errorf("append after truncation: %v", err)
	}
	if _, f := db.Fault(); f == nil {
		t.Error("no fault reported")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	_, err = Open(ctx, path)
	if !errors.Is(err, ErrAuditLoss) || lossOf(t, "reopen", err).Missing != 3 {
		t.Errorf("reopen: %v", err)
	}
	n, err = Verify(ctx, path)
	if loss := lossOf(t, "offline verify", err); n != 4 || loss.Missing != 3 {
		t.Errorf("offline verify: %d, %+v", n, loss)
	}
}

// TestDeletedDatabaseIsNoticed: a database file deleted under a running
// store stops it (with the reason), VerifyChain says the database is
// gone, and neither Open nor Verify mistakes the empty place for an
// empty log: Open refuses to create a new file there.
func TestDeletedDatabaseIsNoticed(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 5)
	if err := db.FlushAnchors(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if _, err := db.VerifyChain(ctx); !lossOf(t, "running handle", err).Gone {
		t.Errorf("running handle: %v", err)
	}
	if _, err := db.AppendDecision(ctx, store.Decision{Verdict: "allow"}); !errors.Is(err, ErrFileGone) || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("append after deletion: %v", err)
	}
	if err := db.CreateRequest(ctx, store.Request{ID: "r", Session: "s", Created: time.Now(), Deadline: time.Now().Add(time.Minute)}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("new request after deletion: %v", err)
	}
	db.Close()

	if _, err := Open(ctx, path); !errors.Is(err, ErrAuditLoss) || !lossOf(t, "reopen", err).Gone {
		t.Errorf("reopen: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open created a new database where one was lost: %v", err)
	}
	if _, err := Verify(ctx, path); !lossOf(t, "offline verify", err).Gone || !strings.Contains(err.Error(), "knows of 5 record(s)") {
		t.Errorf("offline verify: %v", err)
	}

	// The operator accepts the loss by moving the anchor aside: then a
	// new database starts.
	if err := os.Rename(path+AnchorSuffix, path+AnchorSuffix+".lost"); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("after the anchor was moved aside: %v", err)
	}
	db.Close()
}

// TestReplacedDatabaseIsNoticed: another database put in place of the
// one the anchors belong to (here, one with more records than the
// anchor, which a count alone would accept) is refused when the store
// opens; a database replaced under a running store stops it.
func TestReplacedDatabaseIsNoticed(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	otherDB := func(name string) string {
		p := filepath.Join(dir, name)
		o, err := Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, o, 9)
		o.Close()
		return p
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 2)
	db.Close()
	if err := os.Rename(otherDB("a.db"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path); !errors.Is(err, ErrAuditLoss) || !lossOf(t, "reopen", err).Replaced {
		t.Errorf("reopen: %v", err)
	}

	// Under a running store.
	path2 := filepath.Join(dir, "running.db")
	db, err = Open(ctx, path2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	appendN(t, db, 2)
	if err := os.Rename(otherDB("b.db"), path2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendDecision(ctx, store.Decision{Verdict: "allow"}); !errors.Is(err, ErrFileGone) || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("append after replacement: %v", err)
	}
	if _, err := db.VerifyChain(ctx); !lossOf(t, "verify after replacement", err).Replaced {
		t.Errorf("verify after replacement: %v", err)
	}
}

// TestExtraAnchor: an anchor file elsewhere (audit.anchor_file) is
// written too, and checked: deleting the database and its sidecar
// together is still noticed.
func TestExtraAnchor(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warden.db")
	far := filepath.Join(t.TempDir(), "elsewhere.anchor")
	opts := Options{Anchors: []anchor.Sink{anchor.File{Path: far}}}
	db, err := OpenWith(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 4)
	db.Close()
	h, err := anchor.ReadFile(far)
	if err != nil || h.Seq != 4 {
		t.Fatalf("far anchor: %+v, %v", h, err)
	}
	for _, p := range []string{path, path + AnchorSuffix} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenWith(ctx, path, opts); !errors.Is(err, ErrAuditLoss) || !strings.Contains(err.Error(), far) {
		t.Errorf("reopen without the database and its sidecar: %v", err)
	}
	if _, err := Verify(ctx, path, anchor.File{Path: far}); !lossOf(t, "verify", err).Gone {
		t.Errorf("verify: %v", err)
	}
}

// TestGroupCommitUnderConcurrency: many writers at once, appending
// decisions and creating and ending requests. The batches really group
// (some commit more than one record), the log is one chain that
// verifies, and every record is committed — visible to another
// connection — before the call that wrote it returns: the Committed
// hook reads the file through a second handle and marks the records
// durable, and each writer checks its records were marked before it got
// its answer. Ordering, not timing.
func TestGroupCommitUnderConcurrency(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warden.db")
	var (
		mu       sync.Mutex
		durable  = map[int64]bool{}
		maxBatch int
		other    *sql.DB
	)
	committed := func(recs []store.Decision) {
		var last int64
		if err := other.QueryRow(`SELECT coalesce(max(seq), 0) FROM audit`).Scan(&last); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		maxBatch = max(maxBatch, len(recs))
		for _, d := range recs {
			if d.Seq > last {
				t.Errorf("record %d handed on before another connection could read it (max seq %d)", d.Seq, last)
			}
			durable[d.Seq] = true
		}
	}
	db, err := OpenWith(ctx, path, Options{Committed: committed})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if other, err = sql.Open("sqlite", dsn(path, url.Values{"_pragma": {"busy_timeout(5000)", "query_only(1)"}})); err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	isDurable := func(seq int64) bool {
		mu.Lock()
		defer mu.Unlock()
		return durable[seq]
	}
	const writers, each = 32, 10
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range each {
				if w%4 == 0 {
					// A request's lifecycle: its records are written by
					// CreateRequest and ResolveRequest.
					id := fmt.Sprintf("r-%d-%d", w, i)
					now := time.Now()
					if err := db.CreateRequest(ctx, store.Request{ID: id, Session: "s", Action: action.NewShell("rm -rf x"), Created: now, Deadline: now.Add(time.Minute)}); err != nil {
						t.Error(err)
						return
					}
					if _, err := db.ResolveRequest(ctx, id, store.Resolution{State: store.Answered, Scope: store.Once}); err != nil {
						t.Error(err)
						return
					}
					recs, err := db.Decisions(ctx, store.AuditFilter{Session: "s"})
					if err != nil {
						t.Error(err)
						return
					}
					for _, d := range recs {
						if d.RequestID == id && !isDurable(d.Seq) {
							t.Errorf("request %s: record %d returned before it was durable", id, d.Seq)
						}
					}
					continue
				}
				d, err := db.AppendDecision(ctx, store.Decision{Session: fmt.Sprintf("w%d", w), Verdict: "deny", Payload: fmt.Sprint(i)})
				if err != nil {
					t.Error(err)
					return
				}
				if !isDurable(d.Seq) {
					t.Errorf("AppendDecision returned record %d before it was durable", d.Seq)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	want := (writers/4)*each*2 + (writers-writers/4)*each
	if n, err := db.VerifyChain(ctx); n != want || err != nil {
		t.Fatalf("VerifyChain = %d, %v; want %d, nil", n, err, want)
	}
	if maxBatch < 2 {
		t.Errorf("no batch held more than one record (max %d): nothing was grouped", maxBatch)
	}
}

// TestOpFailureRollsBackAlone: in a batch, a write that fails (a
// duplicate request id) rolls back alone, its audit record with it; the
// writes beside it commit.
func TestOpFailureRollsBackAlone(t *testing.T) {
	ctx := t.Context()
	db := openClosed(t)
	now := time.Now()
	req := func(id string) store.Request {
		return store.Request{ID: id, Session: "s", Created: now, Deadline: now.Add(time.Minute)}
	}
	if err := db.CreateRequest(ctx, req("dup")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			id := fmt.Sprintf("ok-%d", i)
			if i%2 == 0 {
				id = "dup"
			}
			errs[i] = db.CreateRequest(ctx, req(id))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i%2 == 0) != (err != nil) {
			t.Errorf("create %d: %v", i, err)
		}
	}
	recs, err := db.Decisions(ctx, store.AuditFilter{})
	if err != nil || len(recs) != 11 {
		t.Fatalf("%d records (%v), want 11: one ask per request created", len(recs), err)
	}
	if n, err := db.VerifyChain(ctx); n != 11 || err != nil {
		t.Fatalf("VerifyChain = %d, %v", n, err)
	}
}
