package storetest

import (
	"testing"
	"time"
)

// aboutNow fails t unless got lies between before (taken just ahead of
// the call) and now, give or take a second: the time a store chose for
// a zero time it was given.
func aboutNow(t *testing.T, what string, got, before time.Time) {
	t.Helper()
	if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("%s %v, want about now (%v)", what, got, before)
	}
}
