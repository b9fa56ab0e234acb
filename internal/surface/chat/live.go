package chat

import (
	"errors"
	"strings"
	"sync"
)

// Live holds an adapter's connection to its platform (a gateway
// session, a bot client) while Connect runs, for the calls that post
// from other goroutines. The zero value holds none.
type Live[C any] struct {
	mu sync.Mutex
	c  *C
}

// Hold makes c the live connection until release is called (when
// Connect returns).
func (l *Live[C]) Hold(c *C) (release func()) {
	l.mu.Lock()
	l.c = c
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.c = nil
		l.mu.Unlock()
	}
}

// Get returns the live connection, or an error naming platform while
// disconnected.
func (l *Live[C]) Get(platform string) (*C, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return nil, errors.New(platform + ": not connected")
	}
	return l.c, nil
}

// Scrub removes secrets from an error: oldnew are pairs of a secret
// (a token; never empty) and what stands for it. The platforms'
// libraries put tokens in the URLs and messages of their errors.
func Scrub(err error, oldnew ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := strings.NewReplacer(oldnew...).Replace(msg)
	if out == msg {
		return err
	}
	return errors.New(out)
}
