package host

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/testfs"
)

// execOutcome runs command as web session s and returns its final event.
func execOutcome(t *testing.T, th *testHost, session, command, dir string) localapi.Event {
	t.Helper()
	s := startExec(t.Context(), th.client, localapi.ExecRequest{Session: session, Command: command, Dir: dir})
	for {
		e := s.next(t)
		switch e.Event {
		case localapi.EventExit, localapi.EventDenied, localapi.EventError:
			return e
		case localapi.EventPending:
			t.Fatalf("%s: a question was asked: %+v", command, e)
		}
	}
}

// TestEmptyConfigReload is issue 14's first finding: a config file
// emptied while the host runs must not turn the operator's policy off.
// The deny rule keeps blocking (the forbidden command does not run),
// the refusal is logged at WARN, shown on every console page and in the
// host's status; a real edit is loaded again, and one that removes the
// deny rule is logged at WARN with what it removed.
func TestEmptyConfigReload(t *testing.T) {
	cfg := newConfig(t)
	logs := &buftest.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	write := func(s string) {
		t.Helper()
		// A new inode each time, as editors write, so the watcher never
		// trusts an unchanged size and time.
		tmp := cfg.ConfigPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg.ConfigPath); err != nil {
			t.Fatal(err)
		}
	}
	write("approvals:\n  mode: off\n  deny: ['touch forbidden*']\n")
	th := startHost(t, cfg)
	work := t.TempDir()
	forbidden := filepath.Join(work, "forbidden")
	denied := func() {
		t.Helper()
		if e := execOutcome(t, th, "w", "touch forbidden", work); e.Event != localapi.EventDenied {
			t.Fatalf("touch forbidden: %+v", e)
		}
		if _, err := os.Stat(forbidden); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the forbidden command ran")
		}
	}
	denied()

	for _, empty := range []string{"", "  \n\t\n"} {
		write(empty)
		waitFor(t, "the empty config to be refused", func() bool { return th.pol.problem() != nil })
		denied()
		st, err := th.client.Status(t.Context())
		if err != nil || !strings.Contains(st.Config.Rejected, "empty") || st.Config.Digest == "" || !st.Store.OK {
			t.Fatalf("status: %+v %v", st, err)
		}
		if code, page := newConsole(t, th).do("GET", "/pending", nil); code != 200 || !strings.Contains(page, "Config not reloaded") || !strings.Contains(page, "empty") {
			t.Fatalf("console page %d has no banner:\n%s", code, page)
		}
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "keeping last good config") {
		t.Errorf("the refusal was not logged at WARN:\n%s", l)
	}

	// A real edit loads; one that drops the deny rule is logged as a
	// widening with what it removed.
	const loose = "approvals:\n  mode: off\n"
	write(loose)
	want := config.Default()
	if c, _, err := config.Parse([]byte(loose), cfg.ConfigPath); err == nil {
		want = c
	}
	waitFor(t, "the edit to load", func() bool { return th.pol.problem() == nil && th.gate.Policy().Digest() == want.Digest })
	if l := logs.String(); !strings.Contains(l, `level=WARN msg="policy reloaded; it now lets through more than before"`) ||
		!strings.Contains(l, `approvals.deny: removed [\"touch forbidden*\"]`) {
		t.Errorf("the widening reload was not logged with its diff:\n%s", l)
	}
	if code, page := newConsole(t, th).do("GET", "/pending", nil); code != 200 || strings.Contains(page, "Config not reloaded") {
		t.Errorf("banner still shown after a good edit")
	}
}

// TestServeRefusesEmptyConfigAtStart: with no last good config to keep,
// an empty file at start is an error that says what to do.
func TestServeRefusesEmptyConfigAtStart(t *testing.T) {
	cfg := configured(t, "\n")
	_, err := start(t.Context(), cfg)
	if !errors.Is(err, config.ErrEmpty) || !strings.Contains(err.Error(), "write {}") {
		t.Fatalf("start with an empty config: %v", err)
	}
}

// TestDeletedDatabaseStopsWork: the host notices its database file
// deleted (without waiting for a write), refuses new work with a clear
// error, says why in its status and on the console, and audit verify
// reports the database gone. A restart refuses to start on an empty new
// file.
func TestDeletedDatabaseStopsWork(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	work := t.TempDir()
	if e := execOutcome(t, th, "w", "true", work); e.Event != localapi.EventExit {
		t.Fatalf("before: %+v", e)
	}
	if err := th.db.FlushAnchors(t.Context()); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(cfg.StateDir, DBName)
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	waitFor(t, "the host to notice", func() bool {
		st, err := th.client.Status(t.Context())
		return err == nil && !st.Store.OK
	})
	st, _ := th.client.Status(t.Context())
	if !strings.Contains(st.Store.Fault, "deleted") {
		t.Errorf("status: %+v", st.Store)
	}
	e := execOutcome(t, th, "w", "touch ran", work)
	if e.Event != localapi.EventDenied || !strings.Contains(e.Message, "deleted") {
		t.Errorf("new work after the deletion: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Error("a command ran with no audit log")
	}
	if code, page := newConsole(t, th).do("GET", "/pending", nil); code != 200 || !strings.Contains(page, "The store refuses all work") {
		t.Errorf("no console banner:\n%s", page)
	}
	res, err := th.client.Verify(t.Context())
	if err != nil || res.OK || !res.Gone {
		t.Errorf("verify: %+v %v", res, err)
	}
	th.stop(t)
	if _, err := start(t.Context(), cfg); !errors.Is(err, sqlite.ErrAuditLoss) {
		t.Errorf("restart on a missing database: %v", err)
	}
}

// TestDiskFullHost fills the state directory's file system (a small
// tmpfs) while a question is pending. The asker that gives up meanwhile
// is answered at once (nothing ran); its request, which the store could
// not end, is withdrawn once space returns, and nobody can approve it in
// between; new work is refused with the reason; afterwards the host
// works again and the chain verifies.
func TestDiskFullHost(t *testing.T) {
	fs := testfs.Tmpfs(t, 4<<20)
	cfg := newConfig(t)
	cfg.StateDir = filepath.Join(fs, "state")
	th := startHost(t, cfg)
	work := t.TempDir()

	ctx, hangUp := context.WithCancel(t.Context())
	s := startExec(ctx, th.client, localapi.ExecRequest{Session: "w", Command: "rm -rf build && touch approved", Dir: work})
	p, _ := s.until(t, localapi.EventPending)

	// Fill the disk.
	filler := filepath.Join(fs, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 32<<10); ; {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	// Writes now fail: the asker hangs up, and its withdrawal cannot be
	// written.
	waitFor(t, "the store to fill up", func() bool {
		_, err := th.runner.Advise(context.Background(), action.NewShell("true").In(work))
		return errors.Is(err, store.ErrUnavailable)
	})
	hangUp()
	<-s.done
	if r, err := th.st.GetRequest(t.Context(), p.ID); err != nil || r.State != store.Pending {
		t.Fatalf("request while the disk is full: %s %v", r.State, err)
	}
	// Nobody waits for it, so nobody may approve it.
	if _, err := th.client.Approve(t.Context(), p.ID, localapi.ApproveRequest{}); err == nil {
		t.Fatal("a request whose asker is gone was approved")
	}
	// New work is refused, with the reason.
	e := execOutcome(t, th, "w", "touch new", work)
	if e.Event != localapi.EventDenied || !strings.Contains(e.Message, "disk full") {
		t.Errorf("new work while full: %+v", e)
	}
	st, err := th.client.Status(t.Context())
	if err != nil || st.Store.OK || !strings.Contains(st.Store.Fault, "disk full") {
		t.Errorf("status while full: %+v %v", st, err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphaned request to be withdrawn", func() bool {
		r, err := th.st.GetRequest(t.Context(), p.ID)
		return err == nil && r.State == store.Withdrawn
	})
	waitFor(t, "the store to take work again", func() bool {
		st, err := th.client.Status(t.Context())
		return err == nil && st.Store.OK
	})
	if e := execOutcome(t, th, "w3", "touch after", work); e.Event != localapi.EventExit {
		t.Errorf("work after recovery: %+v", e)
	}
	for _, name := range []string{"approved", "new"} {
		if _, err := os.Stat(filepath.Join(work, name)); err == nil {
			t.Errorf("%s ran", name)
		}
	}
	recs, err := th.st.Decisions(t.Context(), store.AuditFilter{Session: "w"})
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, d := range recs {
		if d.RequestID == p.ID {
			trail = append(trail, d.Verdict+" "+d.Rule)
		}
	}
	if strings.Join(trail, ", ") != "ask human, deny human.withdrawn" {
		t.Errorf("the request's records: %q", trail)
	}
	if res, err := th.client.Verify(t.Context()); err != nil || !res.OK {
		t.Errorf("verify: %+v %v", res, err)
	}
}

// TestAnchorFileIsProtected: the audit anchor kept on another path
// (audit.anchor_file) is written by the host and is warden's own: even
// with approvals.mode off, a command cannot overwrite it.
func TestAnchorFileIsProtected(t *testing.T) {
	cfg := newConfig(t)
	far := filepath.Join(t.TempDir(), "far.anchor")
	writeConfig(t, cfg, "approvals:\n  mode: off\naudit:\n  anchor_file: "+far+"\n")
	th := startHost(t, cfg)
	work := t.TempDir()
	if e := execOutcome(t, th, "w", "echo hi > other", work); e.Event != localapi.EventExit {
		t.Fatalf("an ordinary write under mode off: %+v", e)
	}
	e := execOutcome(t, th, "w", "echo '{}' > "+far, work)
	if e.Event != localapi.EventDenied {
		t.Fatalf("overwrite of the anchor file: %+v", e)
	}
	th.stop(t)
	h, err := anchor.ReadFile(far)
	if err != nil || h.Seq < 2 {
		t.Fatalf("far anchor after a clean stop: %+v %v", h, err)
	}
}
