package guardian

import (
	"sync"
	"time"
)

// tally counts consecutive reviewer failures per session, for a bounded
// number of sessions (the least recently failed is forgotten first, like
// the gate's denial breaker). A forgotten session simply starts again
// from zero, which errs towards calling the model, never towards
// approving.
type tally struct {
	mu    sync.Mutex
	limit int
	tick  uint64
	m     map[string]*failures
}

type failures struct {
	n int
	// manualUntil is when the session's manual mode ends; zero when the
	// session is not in manual mode.
	manualUntil time.Time
	last        uint64
}

func newTally(limit int) *tally { return &tally{limit: limit, m: map[string]*failures{}} }

// manual reports whether session is in manual mode at now, and its
// failure count.
func (t *tally) manual(session string, now time.Time) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.m[session]
	if !ok || f.manualUntil.IsZero() || !now.Before(f.manualUntil) {
		return 0, false
	}
	return f.n, true
}

// fail records a failure. When the streak reaches threshold the session
// enters manual mode until now+cooldown; it reports the streak and
// whether the session is now in manual mode.
func (t *tally) fail(session string, now time.Time, threshold int, cooldown time.Duration) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	f, ok := t.m[session]
	if !ok {
		if len(t.m) >= t.limit {
			t.evict()
		}
		f = &failures{}
		t.m[session] = f
	}
	f.n++
	f.last = t.tick
	if f.n >= threshold {
		f.manualUntil = now.Add(cooldown)
		return f.n, true
	}
	return f.n, false
}

// succeed ends the session's streak (and manual mode): the model gave a
// real verdict.
func (t *tally) succeed(session string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, had := t.m[session]
	delete(t.m, session)
	return had
}

func (t *tally) evict() {
	oldest, key := ^uint64(0), ""
	for k, f := range t.m {
		if f.last < oldest {
			oldest, key = f.last, k
		}
	}
	delete(t.m, key)
}
