// Package storetest is the conformance suite for store.Store: every
// implementation (SQLite now, PostgreSQL later) runs Run against itself
// and must pass it unchanged, so the host behaves the same on each.
//
// The suite pins down what the interfaces' comments leave open:
//   - times read back Equal to what was written (the zone may differ);
//   - a request starts pending, ends exactly once, and a late resolver
//     gets store.ErrNotPending together with the row as it ended;
//   - a zero Resolution.At, EndSession time or Decision.Time means now;
//   - ending an ended session keeps the first end time, and an ended
//     session has no yolo;
//   - AuditFilter.Since is inclusive, and Limit keeps the newest records
//     that match, listed oldest first;
//   - AppendDecision stores the time in UTC, so that the record it
//     returns, the record Decisions reads back and store.ChainHash agree;
//   - every state change of a request writes its audit record
//     (store.AskRecord, store.EndRecord) with it, and a refused change
//     writes none.
package storetest

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Tamperer is implemented by a test's wrapper around a store that can
// change the audit log behind the store's back, as someone with write
// access to the database could. Run's tampering tests need it and are
// skipped for stores without it; a production store must not have it.
type Tamperer interface {
	// RewriteDecision overwrites every stored field of audit record
	// d.Seq with d's, Prev and Hash included, as given.
	RewriteDecision(ctx context.Context, d store.Decision) error
	// DeleteDecision removes audit record seq.
	DeleteDecision(ctx context.Context, seq int64) error
}

// testCase is one conformance case on a fresh store of type S.
type testCase[S any] struct {
	name string
	run  func(t *testing.T, s S)
}

// test is one case of Run's.
type test = testCase[store.Store]

// runCases runs each case as a subtest, one after another, on a fresh
// store from open (openFresh: closed when the subtest ends).
func runCases[S any](t *testing.T, open func(t *testing.T) S, cases []testCase[S]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, openFresh(t, open)) })
	}
}

// Run runs the suite. open returns a new, empty store for each subtest;
// Run closes it (and fails the subtest if Close fails) when the subtest
// ends, so open need not. Subtests run one after another.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"Requests", slices.Concat(requestTests, lifecycleTests)},
		{"Grants", grantTests},
		{"Sessions", sessionTests},
		{"Audit", slices.Concat(auditTests, tamperTests())},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { runCases(t, open, g.tests) })
	}
}

// base is the fixtures' clock: nanoseconds set, so a store that drops
// precision fails.
var base = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// elsewhere is a zone that is not UTC, to show a store compares
// instants, not clock faces.
var elsewhere = time.FixedZone("UTC+05:30", 5*3600+1800)

// same fails t unless got and want marshal to the same JSON, which
// compares json.RawMessage fields by content and nil and empty slices
// apart. Times must be normalised (utc) first.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: marshal got: %v", what, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: marshal want: %v", what, err)
	}
	if string(g) != string(w) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// utc returns t in UTC; the zero time stays zero.
func utc(t time.Time) time.Time { return t.UTC() }

// must fails t at once on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// openFresh opens a store for one subtest; one that is an io.Closer is
// closed when the subtest ends.
func openFresh[S any](t *testing.T, open func(t *testing.T) S) S {
	t.Helper()
	s := open(t)
	if c, ok := any(s).(io.Closer); ok {
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	return s
}
