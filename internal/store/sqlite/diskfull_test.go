package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/testfs"
)

// TestDiskFull fills a small tmpfs until the store fails: it then
// refuses work with the reason (store.ErrUnavailable, ErrDiskFull) and
// says so in Fault. Once space returns it checkpoints its WAL and takes
// work again by itself, and the log is one chain that verifies.
func TestDiskFull(t *testing.T) {
	ctx := t.Context()
	dir := testfs.Tmpfs(t, 2<<20)
	path := filepath.Join(dir, "warden.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Most of the space goes to a filler, the rest to records.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	if err := os.Truncate(filler, fileSize(t, filler)-256<<10); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 2000)
	var full error
	appended := 0
	for i := range 10_000 {
		_, err := db.AppendDecision(ctx, store.Decision{Verdict: "deny", Kind: action.Shell, Payload: fmt.Sprintf("%d %s", i, big)})
		if err != nil {
			full = err
			break
		}
		appended++
	}
	if full == nil {
		t.Fatal("the disk never filled")
	}
	t.Logf("full after %d records: %v; wal %d bytes", appended, full, fileSize(t, path+"-wal"))
	if !errors.Is(full, store.ErrUnavailable) || !errors.Is(full, ErrDiskFull) {
		t.Fatalf("error when full: %v; want ErrUnavailable and ErrDiskFull", full)
	}
	if since, f := db.Fault(); f == nil || since.IsZero() {
		t.Fatalf("Fault = %v, %v", f, since)
	}
	// Work is refused with the reason while the disk is full.
	now := time.Now()
	err = db.CreateRequest(ctx, store.Request{ID: "r1", Session: "s", Created: now, Deadline: now.Add(time.Minute)})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("create while full: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, f := db.Fault()
		if f == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refusing work 30s after space returned: %v", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := db.CreateRequest(ctx, store.Request{ID: "r1", Session: "s", Created: now, Deadline: now.Add(time.Minute)}); err != nil {
		t.Fatalf("create after recovery: %v", err)
	}
	if _, err := db.AppendDecision(ctx, store.Decision{Verdict: "allow"}); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	if n, err := db.VerifyChain(ctx); err != nil || n != appended+2 {
		t.Fatalf("VerifyChain = %d, %v; want %d", n, err, appended+2)
	}
	if wal := fileSize(t, path+"-wal"); wal > 1<<20 {
		t.Errorf("WAL still %d bytes after recovery: not checkpointed", wal)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
