package storetest

import (
	"testing"
	"time"
)

// storeCase is one conformance case on a fresh store of type S.
type storeCase[S any] struct {
	name string
	run  func(t *testing.T, s S)
}

// runCases runs each case as a subtest, one after another, each on a
// fresh store from open; a store that is an io.Closer is closed when its
// subtest ends.
func runCases[S any](t *testing.T, open func(t *testing.T) S, cases []storeCase[S]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, openFresh(t, open)) })
	}
}

// aboutNow fails t unless got lies between before (taken just ahead of
// the call) and now, give or take a second: the time a store chose for
// a zero time it was given.
func aboutNow(t *testing.T, what string, got, before time.Time) {
	t.Helper()
	if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("%s %v, want about now (%v)", what, got, before)
	}
}
