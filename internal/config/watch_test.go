package config

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/policy"
)

// recorder collects Watcher callbacks; they run on Run's goroutine.
type recorder struct {
	mu      sync.Mutex
	reloads []*Config
	errs    []error
}

func (r *recorder) onReload(c *Config, _ []Warning) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reloads = append(r.reloads, c)
}

func (r *recorder) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *recorder) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reloads), len(r.errs)
}

func (r *recorder) lastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[len(r.errs)-1]
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "warden.yaml")
		writeFile(t, path, "approvals: {mode: manual}\n")
		var rec recorder
		var logs buftest.Buffer
		w, _, err := NewWatcher(WatchOptions{
			Path:     path,
			Interval: 100 * time.Millisecond,
			Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
			OnReload: rec.onReload,
			OnError:  rec.onError,
		})
		if err != nil {
			t.Fatal(err)
		}
		first := w.Config()

		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		// Stop everything even when a check fails, so the bubble ends.
		defer wg.Wait()
		defer cancel()
		done := make(chan error, 1)
		wg.Go(func() { done <- w.Run(ctx) })
		// A reader on another goroutine, as the gate would be.
		wg.Go(func() {
			for ctx.Err() == nil {
				if w.Config() == nil {
					t.Error("no config published")
				}
				time.Sleep(30 * time.Millisecond)
			}
		})
		step := func() {
			time.Sleep(150 * time.Millisecond)
			synctest.Wait()
		}
		mode := func() policy.Mode { return w.Config().Approvals.Mode }

		step()
		if n, e := rec.counts(); n != 0 || e != 0 || w.Config() != first {
			t.Fatalf("unchanged file: %d reloads, %d errors", n, e)
		}

		writeFile(t, path, "approvals: {mode: off}\n")
		step()
		if n, _ := rec.counts(); n != 1 || mode() != policy.ModeOff {
			t.Fatalf("after edit: %d reloads, mode %v", n, mode())
		}

		writeFile(t, path, "approvals: {mode: [\n")
		step()
		step()
		step()
		if n, e := rec.counts(); n != 1 || e != 1 || mode() != policy.ModeOff {
			t.Fatalf("broken file: %d reloads, %d errors (want 1 report), mode %v", n, e, mode())
		}
		if err := rec.lastErr(); !errors.Is(err, ErrInvalid) {
			t.Errorf("broken file error %v does not match ErrInvalid", err)
		}
		if !strings.Contains(logs.String(), "keeping last good config") {
			t.Errorf("failure not logged:\n%s", logs.String())
		}

		writeFile(t, path, "approvals: {mode: smart}\n")
		step()
		if n, _ := rec.counts(); n != 2 || mode() != policy.ModeSmart {
			t.Fatalf("fixed file: %d reloads, mode %v", n, mode())
		}

		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		step()
		step()
		if _, e := rec.counts(); e != 2 || !errors.Is(rec.lastErr(), fs.ErrNotExist) || mode() != policy.ModeSmart {
			t.Fatalf("removed file: %d errors (last %v), mode %v", e, rec.lastErr(), mode())
		}

		writeFile(t, path, "approvals: {mode: manual}\n")
		step()
		if n, _ := rec.counts(); n != 3 || mode() != policy.ModeManual {
			t.Fatalf("restored file: %d reloads, mode %v", n, mode())
		}

		// Replacing the file by rename, as editors do.
		tmp := path + ".tmp"
		writeFile(t, tmp, "approvals: {mode: off}\n")
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		step()
		if n, _ := rec.counts(); n != 4 || mode() != policy.ModeOff {
			t.Fatalf("renamed file: %d reloads, mode %v", n, mode())
		}

		if err := w.Run(ctx); err == nil {
			t.Error("a second concurrent Run was allowed")
		}
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		default:
			t.Fatal("Run did not return after cancel")
		}
	})
}

// TestWatcherRacyStat covers a rewrite that keeps size and modification
// time: trusted when the mtime is old (the stat shortcut), re-hashed when
// the mtime is recent enough that a second write could share it.
func TestWatcherRacyStat(t *testing.T) {
	tests := []struct {
		name      string
		mtime     time.Time
		wantFresh bool
	}{
		{"old mtime trusted", time.Now().Add(-time.Hour).Truncate(time.Second), false},
		{"recent mtime re-read", time.Now().Truncate(time.Second), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.yaml")
			touch := func(content string) {
				writeFile(t, path, content)
				if err := os.Chtimes(path, tt.mtime, tt.mtime); err != nil {
					t.Fatal(err)
				}
			}
			touch("approvals: {mode: off}\n")
			w, _, err := NewWatcher(WatchOptions{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			before := w.Config().Digest
			touch("approvals: {mode: OFF}\n") // same size, same mtime
			w.poll(t.Context())
			if fresh := w.Config().Digest != before; fresh != tt.wantFresh {
				t.Errorf("reloaded = %v, want %v", fresh, tt.wantFresh)
			}
		})
	}
}

func TestNewWatcherErrors(t *testing.T) {
	if _, _, err := NewWatcher(WatchOptions{}); err == nil {
		t.Error("no path accepted")
	}
	dir := t.TempDir()
	if _, _, err := NewWatcher(WatchOptions{Path: filepath.Join(dir, "none.yaml")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "approvals: {mode: [}\n")
	if _, _, err := NewWatcher(WatchOptions{Path: bad}); !errors.Is(err, ErrInvalid) {
		t.Errorf("broken file: %v", err)
	}
}

// TestWatcherRefusesEmptyFile: a config file truncated to nothing (or to
// whitespace) is refused like a deleted one: the last good config stays
// in force, the failure is logged at WARN once, and Problem says why
// until a real config is written again.
func TestWatcherRefusesEmptyFile(t *testing.T) {
	for _, empty := range []string{"", "\n", "  \t\r\n  \n"} {
		t.Run(strconv.Quote(empty), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.yaml")
			writeFile(t, path, "approvals:\n  deny: ['rm -rf *']\n")
			var rec recorder
			var logs buftest.Buffer
			w, _, err := NewWatcher(WatchOptions{Path: path, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnReload: rec.onReload, OnError: rec.onError})
			if err != nil {
				t.Fatal(err)
			}
			good := w.Config()
			if w.Problem() != nil {
				t.Fatalf("problem before any change: %+v", w.Problem())
			}
			writeFile(t, path, empty)
			w.info = nil // force a re-read whatever the clock says
			w.poll(t.Context())
			w.info = nil
			w.poll(t.Context())
			if n, e := rec.counts(); n != 0 || e != 1 {
				t.Fatalf("empty file: %d reloads, %d errors; want 0, 1", n, e)
			}
			if w.Config() != good || len(w.Config().Approvals.Deny) != 1 {
				t.Fatalf("the empty file replaced the config: deny %v", w.Config().Approvals.Deny)
			}
			if err := rec.lastErr(); !errors.Is(err, ErrEmpty) || !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v: want ErrEmpty and ErrInvalid", err)
			}
			p := w.Problem()
			if p == nil || !errors.Is(p.Err, ErrEmpty) || p.Kept != good.Digest || p.Since.IsZero() {
				t.Fatalf("problem = %+v", p)
			}
			if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "keeping last good config") || !strings.Contains(l, "empty") {
				t.Errorf("refusal not logged at WARN:\n%s", l)
			}
			writeFile(t, path, "approvals:\n  deny: ['rm -rf *', 'dd *']\n")
			w.info = nil
			w.poll(t.Context())
			if n, _ := rec.counts(); n != 1 || len(w.Config().Approvals.Deny) != 2 || w.Problem() != nil {
				t.Fatalf("fixed file: %d reloads, deny %v, problem %+v", n, w.Config().Approvals.Deny, w.Problem())
			}
		})
	}
}

// TestEmptyFileRefusedAtStart: Load and NewWatcher refuse an empty file
// (there is no last good config to keep), while `{}` and a file of
// comments are deliberate and give the defaults.
func TestEmptyFileRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		ok      bool
	}{
		{"", false}, {" \n\t\n", false}, {"{}\n", true}, {"# all defaults\n", true},
	} {
		path := filepath.Join(dir, "c.yaml")
		writeFile(t, path, tc.content)
		_, _, lerr := Load(path)
		_, _, werr := NewWatcher(WatchOptions{Path: path})
		for _, err := range []error{lerr, werr} {
			if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, ErrEmpty)) {
				t.Errorf("%q: %v", tc.content, err)
			}
		}
	}
}
