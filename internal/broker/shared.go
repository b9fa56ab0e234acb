package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
)

// Hosts sharing a store. Each host's broker holds the waiters of the
// questions its own askers put; another host's human may answer them.
// The store announces every committed change (store.Watcher); Notice
// takes each announcement, and Poll, run about once a second, repairs
// whatever an announcement lost: the committed row is always the truth,
// so a lost announcement only delays a wake until the next poll.

// Notice handles a change another process committed: a request of this
// host's waiter that ended wakes its waiter; every other change is
// published to this host's surfaces. Changes this host made itself
// (Origin is its Host) were handled when it made them.
func (b *Broker) Notice(ctx context.Context, c store.Change) {
	if c.Resync {
		b.Poll(ctx)
		return
	}
	if c.Origin != "" && c.Origin == b.o.Host {
		return
	}
	r, err := b.o.Requests.GetRequest(ctx, c.Request)
	if err != nil {
		b.log.DebugContext(ctx, "notice: read request", "id", c.Request, "err", err)
		return
	}
	b.observe(r)
}

// observe publishes a row another process changed, and wakes this
// host's waiter if the row ended.
func (b *Broker) observe(r store.Request) {
	b.mu.Lock()
	_, seen := b.remote[r.ID]
	switch {
	case r.State == store.Pending && !seen:
		b.remote[r.ID] = struct{}{}
	case r.State != store.Pending:
		delete(b.remote, r.ID)
	}
	_, local := b.waiters[r.ID]
	b.mu.Unlock()
	if r.State == store.Pending {
		if !seen && !local {
			b.publish(Event{Type: Created, Request: r})
		}
		return
	}
	b.wake(r)
	b.publish(Event{Type: Ended, Request: r})
}

// Poll reads the pending requests once: a waiter of this host whose
// request is no longer pending wakes with how it ended, and this host's
// surfaces hear of other hosts' requests that appeared or ended since
// the last look. It repairs lost announcements.
func (b *Broker) Poll(ctx context.Context) {
	pending, err := b.o.Requests.PendingRequests(ctx, "")
	if err != nil {
		b.log.WarnContext(ctx, "poll pending requests", "err", err)
		return
	}
	still := make(map[string]bool, len(pending))
	for _, r := range pending {
		still[r.ID] = true
	}
	b.mu.Lock()
	var gone []string
	for id := range b.waiters {
		if !still[id] {
			gone = append(gone, id)
		}
	}
	for id := range b.remote {
		if !still[id] {
			gone = append(gone, id)
		}
	}
	b.mu.Unlock()
	for _, id := range gone {
		r, err := b.o.Requests.GetRequest(ctx, id)
		switch {
		case err == nil && r.State != store.Pending:
			b.observe(r)
		case errors.Is(err, store.ErrNotFound):
			b.mu.Lock()
			delete(b.remote, id)
			b.mu.Unlock()
		}
	}
	for _, r := range pending {
		if r.Host != b.o.Host {
			b.observe(r)
		}
	}
}

// Withdraw withdraws the pending requests of hosts that are gone
// (alive says which are not), with reason, and returns how many it
// ended. A request ends once whichever host withdraws it (the store's
// compare-and-swap); the others find it ended.
func (b *Broker) Withdraw(ctx context.Context, alive func(host string) bool, reason string) (int, error) {
	pending, err := b.o.Requests.PendingRequests(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("withdraw requests of hosts that are gone: %w", err)
	}
	n := 0
	for _, p := range pending {
		if p.Host == b.o.Host || alive(p.Host) {
			continue
		}
		r, err := b.o.Requests.ResolveRequest(ctx, p.ID, store.Resolution{State: store.Withdrawn, Reason: reason, At: b.o.Now()})
		if errors.Is(err, ErrNotPending) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("withdraw requests of hosts that are gone: %w", err)
		}
		n++
		b.observe(r)
	}
	return n, nil
}
