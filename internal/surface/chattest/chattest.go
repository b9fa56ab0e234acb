// Package chattest holds what the chat platforms' tests and their fakes
// (discordtest, slacktest, telegramtest) share: the server a fake is
// built on (Fake), its state read under its lock, the signal that wakes
// a test waiting for the fake's state to change, and the chat core and
// host an adapter's tests run on.
package chattest

import (
	"sync"
	"testing"
	"time"
)

// Changes wakes waiters on every change of a fake's state. The zero
// value is ready to use.
type Changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *Changes) current() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// Notify wakes every waiter.
func (c *Changes) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
	}
	c.ch = make(chan struct{})
}

// Wait waits until cond holds, checking it after every change, and
// fails t after d with what and dump's account of the fake.
func (c *Changes) Wait(t testing.TB, what string, d time.Duration, cond func() bool, dump func() string) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		ch := c.current()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%s: not within %v; messages:\n%s", what, d, dump())
			return
		}
	}
}
