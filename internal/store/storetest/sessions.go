package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

func session(key string, created time.Time) store.SessionRow {
	return store.SessionRow{
		Key:       key,
		Owner:     json.RawMessage(`{"kind": "web", "session": "` + key + `"}`),
		OwnerText: "web:" + key,
		Created:   created,
	}
}

func normSession(s store.SessionRow) store.SessionRow {
	s.Created, s.Ended = utc(s.Created), utc(s.Ended)
	return s
}

func sameSession(t *testing.T, what string, got, want store.SessionRow) {
	t.Helper()
	same(t, what, normSession(got), normSession(want))
}

func yolo(t *testing.T, s store.Store, key string) bool {
	t.Helper()
	on, err := s.SessionYolo(t.Context(), key)
	must(t, "SessionYolo "+key, err)
	return on
}

var sessionTests = []test{
	{"upsert and get", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		row := session("a", base.In(elsewhere))
		must(t, "UpsertSession", s.UpsertSession(ctx, row))
		got, err := s.GetSession(ctx, "a")
		must(t, "GetSession", err)
		sameSession(t, "GetSession", got, row)
		if !got.Created.Equal(row.Created) || !got.Ended.IsZero() {
			t.Errorf("Created %v Ended %v, want %v and zero", got.Created, got.Ended, row.Created)
		}
	}},
	{"upsert leaves an existing session as it is", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		row := session("a", base)
		must(t, "UpsertSession", s.UpsertSession(ctx, row))
		must(t, "SetYolo", s.SetYolo(ctx, "a", true))
		again := session("a", base.Add(time.Hour))
		again.OwnerText = "someone else"
		must(t, "UpsertSession again", s.UpsertSession(ctx, again))
		got, err := s.GetSession(ctx, "a")
		must(t, "GetSession", err)
		row.Yolo = true
		sameSession(t, "after the second upsert", got, row)
		list, err := s.ListSessions(ctx)
		must(t, "ListSessions", err)
		if len(list) != 1 {
			t.Errorf("ListSessions: %d rows, want 1", len(list))
		}
	}},
	{"upsert refuses an empty key", func(t *testing.T, s store.Store) {
		if err := s.UpsertSession(t.Context(), session("", base)); err == nil {
			t.Error("UpsertSession with an empty key: no error")
		}
	}},
	{"get unknown", func(t *testing.T, s store.Store) {
		if _, err := s.GetSession(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSession(unknown) = %v, want ErrNotFound", err)
		}
	}},
	{"list oldest first", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		rows := []store.SessionRow{session("z", base), session("m", base.Add(time.Second)), session("a", base.Add(2*time.Second))}
		for i := len(rows) - 1; i >= 0; i-- {
			must(t, "UpsertSession", s.UpsertSession(ctx, rows[i]))
		}
		got, err := s.ListSessions(ctx)
		must(t, "ListSessions", err)
		gotN := make([]store.SessionRow, 0, len(got))
		for _, g := range got {
			gotN = append(gotN, normSession(g))
		}
		same(t, "ListSessions", gotN, rows)
	}},
	{"end", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "UpsertSession", s.UpsertSession(ctx, session("a", base)))
		end := base.Add(time.Hour).In(elsewhere)
		must(t, "EndSession", s.EndSession(ctx, "a", end))
		got, err := s.GetSession(ctx, "a")
		must(t, "GetSession", err)
		if !got.Ended.Equal(end) {
			t.Errorf("Ended %v, want %v", got.Ended, end)
		}
		must(t, "EndSession again", s.EndSession(ctx, "a", end.Add(time.Hour)))
		got, err = s.GetSession(ctx, "a")
		must(t, "GetSession", err)
		if !got.Ended.Equal(end) {
			t.Errorf("after a second end: Ended %v, want the first, %v", got.Ended, end)
		}
		if err := s.EndSession(ctx, "nope", end); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("EndSession(unknown) = %v, want ErrNotFound", err)
		}
	}},
	{"end with zero time means now", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "UpsertSession", s.UpsertSession(ctx, session("a", base)))
		before := time.Now()
		must(t, "EndSession", s.EndSession(ctx, "a", time.Time{}))
		got, err := s.GetSession(ctx, "a")
		must(t, "GetSession", err)
		if got.Ended.Before(before.Add(-time.Second)) || got.Ended.After(time.Now().Add(time.Second)) {
			t.Errorf("Ended %v, want about now (%v)", got.Ended, before)
		}
	}},
	{"yolo", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "UpsertSession a", s.UpsertSession(ctx, session("a", base)))
		must(t, "UpsertSession b", s.UpsertSession(ctx, session("b", base)))
		steps := []struct {
			name   string
			do     func() error
			a, b   bool
			hasErr error
		}{
			{"new sessions have none", nil, false, false, nil},
			{"on for a", func() error { return s.SetYolo(ctx, "a", true) }, true, false, nil},
			{"on twice", func() error { return s.SetYolo(ctx, "a", true) }, true, false, nil},
			{"off for a", func() error { return s.SetYolo(ctx, "a", false) }, false, false, nil},
			{"on for b", func() error { return s.SetYolo(ctx, "b", true) }, false, true, nil},
			{"ended b has none", func() error { return s.EndSession(ctx, "b", base.Add(time.Hour)) }, false, false, nil},
			{"unknown session", func() error { return s.SetYolo(ctx, "nope", true) }, false, false, store.ErrNotFound},
		}
		for _, st := range steps {
			if st.do != nil {
				if err := st.do(); !errors.Is(err, st.hasErr) {
					t.Fatalf("%s: error %v, want %v", st.name, err, st.hasErr)
				}
			}
			if a, b := yolo(t, s, "a"), yolo(t, s, "b"); a != st.a || b != st.b {
				t.Errorf("%s: yolo a=%v b=%v, want a=%v b=%v", st.name, a, b, st.a, st.b)
			}
		}
		if yolo(t, s, "nope") {
			t.Error("an unknown session has yolo")
		}
		got, err := s.GetSession(ctx, "b")
		must(t, "GetSession", err)
		if !got.Yolo {
			t.Error("GetSession of ended b: the switch itself should still read on")
		}
	}},
}
