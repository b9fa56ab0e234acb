package anchor

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warden.db.anchor")
	f := File{Path: path}
	if _, err := f.Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read before any write: %v", err)
	}
	h5 := Head{Store: "s1", Seq: 5, Hash: "h5"}
	if err := f.Push(ctx, h5); err != nil {
		t.Fatal(err)
	}
	// Never lowered: another process may be behind this one.
	if err := f.Push(ctx, Head{Store: "s1", Seq: 3, Hash: "h3"}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Read(); err != nil || got.Seq != 5 || got.Hash != "h5" {
		t.Fatalf("after a lower head: %+v %v", got, err)
	}
	if err := f.Push(ctx, Head{Store: "s1", Seq: 9, Hash: "h9"}); err != nil {
		t.Fatal(err)
	}
	// Another database's anchor is evidence: never overwritten.
	if err := f.Push(ctx, Head{Store: "s2", Seq: 100, Hash: "x"}); !errors.Is(err, ErrOtherStore) {
		t.Fatalf("push of another store: %v", err)
	}
	if got, _ := f.Read(); got.Store != "s1" || got.Seq != 9 {
		t.Fatalf("anchor now %+v", got)
	}
	// No temporary files left behind; mode is not world-readable.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("files beside the anchor: %v", ents)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("anchor mode %v", fi.Mode())
	}
	// A torn or foreign file is reported, not trusted.
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(); err == nil {
		t.Error("a broken anchor read as valid")
	}
}

// TestHTTPAndKeeper: the keeper pushes to every sink from its
// goroutine, coalescing heads posted while a push is under way (the
// sinks see the newest, never an older one after a newer), and Flush
// returns once everything posted before it was pushed. The HTTP sink
// posts JSON to a real server; a failing sink does not stop the others.
func TestHTTPAndKeeper(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []Head
		gate = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		var h Head
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&h) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, h)
		mu.Unlock()
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := File{Path: filepath.Join(dir, "a")}
	broken := File{Path: filepath.Join(dir, "missing-dir", "a")}
	k := NewKeeper(nil, time.Millisecond, HTTP{URL: srv.URL}, broken, file)
	defer k.Close()

	k.Post(Head{Store: "s", Seq: 1, Hash: "h1"})
	time.Sleep(20 * time.Millisecond) // the first push is now waiting in the server
	for i := int64(2); i <= 50; i++ {
		k.Post(Head{Store: "s", Seq: i, Hash: "h"})
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := k.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[len(got)-1].Seq != 50 || len(got) > 3 {
		t.Fatalf("the server got %d heads ending %+v; want the newest, coalesced", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Errorf("head %d after %d", got[i].Seq, got[i-1].Seq)
		}
	}
	if h, err := file.Read(); err != nil || h.Seq != 50 {
		t.Errorf("file sink beside a failing one: %+v %v", h, err)
	}
}

func TestHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	if err := (HTTP{URL: srv.URL}).Push(t.Context(), Head{Store: "s", Seq: 1}); err == nil {
		t.Error("a 503 counted as pushed")
	}
}
