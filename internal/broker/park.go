package broker

import (
	"context"
	"slices"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Parker lets an asker's own goroutine do the waiting, so that a pending
// request costs one goroutine and no timer: a host streaming to a client
// over a socket parks in a read of that socket, which ends when the
// client hangs up, when the read deadline (the request's deadline)
// passes, or when the broker interrupts it because the request ended.
// Without a Parker in the context, an asker waits on channels and a
// timer (and whoever serves it watches its client).
type Parker interface {
	// Park blocks until Interrupt is called, deadline passes (zero means
	// none) or the asker is gone (the Parker then ends the asker's
	// context). It calls ready once it is armed and returns at once if
	// ready says so, so an Interrupt that came first is not lost.
	// expired reports that the deadline passed.
	Park(deadline time.Time, ready func() bool) (expired bool)
	// Interrupt makes a Park in progress (or the next one) return.
	Interrupt()
	// Unpark is called once the wait is over.
	Unpark()
}

type parkerKey struct{}

// WithParker makes the asks made with ctx wait in p.
func WithParker(ctx context.Context, p Parker) context.Context {
	return context.WithValue(ctx, parkerKey{}, p)
}

// park waits for w in p: a leader ends its request on its deadline or
// when its asker goes (ctx ends), a follower leaves it to the leader.
func (b *Broker) park(ctx context.Context, w *waiter, p Parker, leader bool) *store.Request {
	defer p.Unpark()
	b.mu.Lock()
	w.parked = append(w.parked, p)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if i := slices.Index(w.parked, p); i >= 0 {
			w.parked = slices.Delete(w.parked, i, i+1)
		}
		b.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, p.Interrupt)
	defer stop()
	ended := func() bool {
		select {
		case <-w.done:
			return true
		default:
			return false
		}
	}
	ready := func() bool { return ended() || ctx.Err() != nil }
	deadline := w.req.Deadline
	for !ready() {
		if p.Park(deadline, ready) && !ended() {
			if leader {
				b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Expired, Reason: "no answer before the deadline", At: b.o.Now()})
				break
			}
			deadline = time.Time{} // the leader expires it
		}
	}
	if !ended() {
		if !leader {
			return &store.Request{ID: w.id, State: store.Withdrawn, Reason: causeOf(ctx)}
		}
		b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Withdrawn, Reason: causeOf(ctx), At: b.o.Now()})
	}
	<-w.done
	return w.final
}
