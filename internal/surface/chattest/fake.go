package chattest

import (
	"sync"
	"testing"
	"time"
)

// Copies returns copies of the fake's items (messages, modals) that keep
// accepts (nil keeps all), oldest first, read under mu, which guards
// items.
func Copies[M any](mu *sync.Mutex, items *[]*M, keep func(*M) bool) []M {
	mu.Lock()
	defer mu.Unlock()
	var out []M
	for _, m := range *items {
		if keep == nil || keep(m) {
			out = append(out, *m)
		}
	}
	return out
}

// Find returns a copy of the first of the fake's items that ok accepts,
// read under mu, which guards items.
func Find[M any](mu *sync.Mutex, items *[]*M, ok func(*M) bool) (M, bool) {
	mu.Lock()
	defer mu.Unlock()
	for _, m := range *items {
		if ok(m) {
			return *m, true
		}
	}
	var zero M
	return zero, false
}

// WaitFor waits, checking after every change c signals, until list
// holds an item ok accepts and returns it; after d it fails t with what
// and dump's account of the fake.
func WaitFor[M any](t testing.TB, c *Changes, what string, d time.Duration, list func() []M, ok func(M) bool, dump func() string) M {
	t.Helper()
	var got M
	c.Wait(t, what, d, func() bool {
		for _, m := range list() {
			if ok(m) {
				got = m
				return true
			}
		}
		return false
	}, dump)
	return got
}
