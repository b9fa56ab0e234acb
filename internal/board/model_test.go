package board

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

func TestReady(t *testing.T) {
	for _, tc := range []struct {
		parents []store.TaskStatus
		want    bool
	}{
		{nil, true},
		{[]store.TaskStatus{store.TaskDone}, true},
		{[]store.TaskStatus{store.TaskDone, store.TaskDone}, true},
		{[]store.TaskStatus{store.TaskDone, store.TaskReview}, false},
		{[]store.TaskStatus{store.TaskRunning}, false},
		{[]store.TaskStatus{store.TaskBlocked, store.TaskDone}, false},
	} {
		if got := Ready(tc.parents); got != tc.want {
			t.Errorf("Ready(%v) = %v", tc.parents, got)
		}
	}
}

// TestVerbs: each verb's legality is exactly the table's operator row.
func TestVerbs(t *testing.T) {
	want := map[Verb][]store.TaskStatus{
		Block:   {store.TaskTodo, store.TaskReady, store.TaskRunning, store.TaskReview},
		Unblock: {store.TaskBlocked},
		Done:    {store.TaskTodo, store.TaskReady, store.TaskRunning, store.TaskBlocked, store.TaskReview},
		Rerun:   {store.TaskReview},
	}
	for v, froms := range want {
		for _, from := range store.TaskStatuses() {
			if got := v.Allowed(from); got != slices.Contains(froms, from) {
				t.Errorf("%s from %s: allowed %v", v, from, got)
			}
		}
	}
	if _, err := Verb("close").Target(); err == nil {
		t.Error("unknown verb has a target")
	}
	if Verb("close").Allowed(store.TaskTodo) {
		t.Error("unknown verb allowed")
	}
}

func TestParseWorkspace(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "scratch",
		"scratch":            "scratch",
		"dir:/srv/app":       "dir:/srv/app",
		"dir:/srv/app/":      "dir:/srv/app",
		"dir:/srv/./a/../b/": "dir:/srv/b",
		"dir:/":              "dir:/",
	} {
		got, err := ParseWorkspace(in)
		if err != nil || got != want {
			t.Errorf("ParseWorkspace(%q) = %q, %v; want %q", in, got, err, want)
		}
		if !store.ValidWorkspace(got) {
			t.Errorf("ParseWorkspace(%q) = %q, which the store refuses", in, got)
		}
	}
	for _, in := range []string{"dir:", "dir:rel/path", "/srv/app", "tmp", "dir:/a\x00b", "Scratch"} {
		if got, err := ParseWorkspace(in); !errors.Is(err, ErrWorkspace) {
			t.Errorf("ParseWorkspace(%q) = %q, %v; want ErrWorkspace", in, got, err)
		}
	}
}

func TestWorkspaceDir(t *testing.T) {
	if d, err := WorkspaceDir("scratch", "/state/scratch", "t1"); err != nil || d != "/state/scratch/t1" {
		t.Errorf("scratch: %q, %v", d, err)
	}
	if d, err := WorkspaceDir("dir:/srv/app", "/state/scratch", "t1"); err != nil || d != "/srv/app" {
		t.Errorf("dir: %q, %v", d, err)
	}
	for _, tc := range [][3]string{
		{"scratch", "", "t1"},
		{"scratch", "/s", ""},
		{"scratch", "/s", ".."},
		{"scratch", "/s", "a/b"},
		{"dir:rel", "/s", "t1"},
		{"elsewhere", "/s", "t1"},
	} {
		if d, err := WorkspaceDir(tc[0], tc[1], tc[2]); !errors.Is(err, ErrWorkspace) {
			t.Errorf("WorkspaceDir%q = %q, %v; want ErrWorkspace", tc, d, err)
		}
	}
}

func TestIDs(t *testing.T) {
	clock := time.UnixMilli(1_750_000_000_000)
	g := &IDs{Now: func() time.Time { return clock }, Rand: bytes.NewReader(bytes.Repeat([]byte{0xff}, 64))}
	var ids []string
	step := func(d time.Duration, n int) {
		clock = clock.Add(d)
		for range n {
			ids = append(ids, g.New())
		}
	}
	step(0, 3)                // same millisecond: the counter counts
	step(time.Millisecond, 2) // next millisecond: a new random start
	step(-time.Hour, 2)       // the clock stepped back: still increasing
	step(2*time.Hour, 1)
	for i, id := range ids {
		if len(id) != 14 {
			t.Errorf("id %q: %d characters, want 14", id, len(id))
		}
		for _, r := range id {
			if !bytes.ContainsRune([]byte(crockford), r) {
				t.Errorf("id %q: %q is not in the alphabet", id, r)
			}
		}
		if i > 0 && id <= ids[i-1] {
			t.Errorf("id %d %q does not sort after %q", i, id, ids[i-1])
		}
	}
	// The counter running out borrows the next millisecond.
	g2 := &IDs{Now: func() time.Time { return clock }}
	prev := g2.New()
	for i := range 1 << seqBits {
		id := g2.New()
		if id <= prev {
			t.Fatalf("id %d %q after %q", i, id, prev)
		}
		prev = id
	}
	// Zero value works.
	var z IDs
	if a, b := z.New(), z.New(); len(a) != 14 || b <= a {
		t.Errorf("zero IDs: %q then %q", a, b)
	}
}
