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
	// none), the asker's context ends, or the asker is gone (the Parker
	// then ends that context). It calls ready once it is armed and
	// returns at once if ready says so, so an Interrupt that came first
	// is not lost. expired reports that the deadline passed.
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
// Its frame is kept small (the work is in helpers), so that the stack of
// a goroutine parked here shrinks to the runtime's smallest.
func (b *Broker) park(ctx context.Context, w *waiter, p Parker, leader bool) *store.Request {
	defer p.Unpark()
	b.parkIn(w, p)
	defer b.unpark(w, p)
	r := &parking{ctx: ctx, w: w}
	ready := r.ready
	deadline := w.req.Deadline
	for !ready() {
		if p.Park(deadline, ready) && !r.ended() {
			if leader {
				b.expire(ctx, w)
				break
			}
			deadline = time.Time{} // the leader expires it
		}
	}
	return b.parked(ctx, w, leader)
}

// parking is what a parked asker waits for.
type parking struct {
	ctx context.Context
	w   *waiter
}

func (r *parking) ended() bool {
	select {
	case <-r.w.done:
		return true
	default:
		return false
	}
}

func (r *parking) ready() bool { return r.ended() || r.ctx.Err() != nil }

// expire ends w's request on its deadline.
func (b *Broker) expire(ctx context.Context, w *waiter) {
	b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Expired, Reason: "no answer before the deadline", At: b.o.Now()})
}

// parked is how a park ended: the request's end, or, when the asker's
// context ended first, its withdrawal (a leader's) or the follower's
// leaving.
func (b *Broker) parked(ctx context.Context, w *waiter, leader bool) *store.Request {
	select {
	case <-w.done:
		return w.final
	default:
	}
	if !leader {
		return &store.Request{ID: w.id, State: store.Withdrawn, Reason: causeOf(ctx)}
	}
	b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Withdrawn, Reason: causeOf(ctx), At: b.o.Now()})
	<-w.done
	return w.final
}

// parkIn and unpark keep w.parked, outside park's frame.
func (b *Broker) parkIn(w *waiter, p Parker) {
	b.mu.Lock()
	w.parked = append(w.parked, p)
	b.mu.Unlock()
}

func (b *Broker) unpark(w *waiter, p Parker) {
	b.mu.Lock()
	if i := slices.Index(w.parked, p); i >= 0 {
		w.parked = slices.Delete(w.parked, i, i+1)
	}
	b.mu.Unlock()
}
