package chattest

import (
	"sync"
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

// WaitFor waits, checking after every change of f, until list holds
// an item ok accepts and returns it; after d it fails the test with what
// and the fake's account of itself.
func WaitFor[M any](f *Fake, what string, d time.Duration, list func() []M, ok func(M) bool) M {
	f.T.Helper()
	var got M
	f.Wait(what, d, func() bool {
		for _, m := range list() {
			if ok(m) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}
