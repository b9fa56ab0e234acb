package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

func normGrants(gs []grant.Grant) []grant.Grant {
	out := make([]grant.Grant, 0, len(gs))
	for _, g := range gs {
		g.Created, g.Expires = utc(g.Created), utc(g.Expires)
		out = append(out, g)
	}
	return out
}

func sameGrants(t *testing.T, what string, got, want []grant.Grant) {
	t.Helper()
	same(t, what, normGrants(got), normGrants(want))
}

// grantSet is three grants, oldest first: a permanent prefix grant, a
// class grant of session a that expires, and an exact grant of b.
func grantSet() []grant.Grant {
	return []grant.Grant{
		{ID: "g1", Scope: grant.Permanent, Grain: grant.Prefix, Pattern: "git push *", By: "ann", Surface: "web", Created: base},
		{ID: "g2", Scope: grant.Session, Session: "a", Grain: grant.Class, Pattern: "delete.recursive", By: "ann", Surface: "terminal",
			Created: base.Add(time.Second).In(elsewhere), Expires: base.Add(time.Hour).In(elsewhere)},
		{ID: "g3", Scope: grant.Session, Session: "b", Grain: grant.Exact, Pattern: "make clean", Created: base.Add(2 * time.Second)},
	}
}

func addGrants(t *testing.T, s store.Store, gs []grant.Grant) {
	t.Helper()
	// Added newest first: the listing order is by creation time.
	for i := len(gs) - 1; i >= 0; i-- {
		must(t, "AddGrant "+gs[i].ID, s.AddGrant(t.Context(), gs[i]))
	}
}

var grantTests = []test{
	{"add and list", func(t *testing.T, s store.Store) {
		gs := grantSet()
		addGrants(t, s, gs)
		got, err := s.ListGrants(t.Context())
		must(t, "ListGrants", err)
		sameGrants(t, "ListGrants", got, gs)
		if len(got) == 3 && !got[1].Expires.Equal(gs[1].Expires) {
			t.Errorf("Expires %v, want %v", got[1].Expires, gs[1].Expires)
		}
	}},
	{"empty list", func(t *testing.T, s store.Store) {
		got, err := s.ListGrants(t.Context())
		must(t, "ListGrants", err)
		if len(got) != 0 {
			t.Errorf("ListGrants on a new store: %v", got)
		}
	}},
	{"session filter", func(t *testing.T, s store.Store) {
		gs := grantSet()
		addGrants(t, s, gs)
		for _, tc := range []struct {
			session string
			want    []grant.Grant
		}{
			{"a", []grant.Grant{gs[0], gs[1]}},
			{"b", []grant.Grant{gs[0], gs[2]}},
			{"c", []grant.Grant{gs[0]}},
			{"", []grant.Grant{gs[0]}},
		} {
			got, err := s.Grants(t.Context(), tc.session)
			must(t, "Grants", err)
			sameGrants(t, fmt.Sprintf("Grants(%q)", tc.session), got, tc.want)
		}
	}},
	{"revoke", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		gs := grantSet()
		addGrants(t, s, gs)
		must(t, "RevokeGrant", s.RevokeGrant(ctx, "g2"))
		got, err := s.ListGrants(ctx)
		must(t, "ListGrants", err)
		sameGrants(t, "ListGrants after revoke", got, []grant.Grant{gs[0], gs[2]})
		got, err = s.Grants(ctx, "a")
		must(t, "Grants", err)
		sameGrants(t, "Grants(a) after revoke", got, []grant.Grant{gs[0]})
		if err := s.RevokeGrant(ctx, "g2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RevokeGrant twice = %v, want ErrNotFound", err)
		}
		if err := s.RevokeGrant(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RevokeGrant(unknown) = %v, want ErrNotFound", err)
		}
	}},
	{"add refuses a duplicate id", func(t *testing.T, s store.Store) {
		gs := grantSet()
		addGrants(t, s, gs)
		dup := gs[2]
		dup.Scope, dup.Session, dup.Pattern = grant.Permanent, "", "rm -rf /"
		if err := s.AddGrant(t.Context(), dup); err == nil {
			t.Fatal("AddGrant with a taken id: no error")
		}
		got, err := s.ListGrants(t.Context())
		must(t, "ListGrants", err)
		sameGrants(t, "after the duplicate", got, gs)
	}},
	{"add refuses a malformed grant", func(t *testing.T, s store.Store) {
		ok := grant.Grant{ID: "g", Scope: grant.Session, Session: "a", Grain: grant.Exact, Pattern: "ls", Created: base}
		for _, tc := range []struct {
			name string
			edit func(*grant.Grant)
		}{
			{"no id", func(g *grant.Grant) { g.ID = "" }},
			{"unknown scope", func(g *grant.Grant) { g.Scope = "forever" }},
			{"session scope without a session", func(g *grant.Grant) { g.Session = "" }},
			{"unknown grain", func(g *grant.Grant) { g.Grain = "everything" }},
			{"no pattern", func(g *grant.Grant) { g.Pattern = "" }},
		} {
			g := ok
			tc.edit(&g)
			if err := s.AddGrant(t.Context(), g); err == nil {
				t.Errorf("%s: no error", tc.name)
			}
		}
		got, err := s.ListGrants(t.Context())
		must(t, "ListGrants", err)
		if len(got) != 0 {
			t.Errorf("malformed grants were stored: %v", got)
		}
	}},
}
