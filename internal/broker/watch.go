package broker

import (
	"context"

	"github.com/wardenhq/warden/internal/store"
)

// EventType says what happened to a request.
type EventType string

// Event types.
const (
	Created EventType = "created"
	Ended   EventType = "ended"
)

// Event is a change surfaces show: a new question, or one that ended (its
// prompts elsewhere must be withdrawn).
type Event struct {
	Type    EventType     `json:"type"`
	Request store.Request `json:"request"`
}

type sub struct {
	session string
	ch      chan Event
}

// Watch streams events of one session ("" for all) until ctx ends. A
// slow reader misses events rather than stalling the broker; surfaces
// re-read the pending list on each event, so a missed one is repaired by
// the next.
func (b *Broker) Watch(ctx context.Context, session string) <-chan Event {
	s := &sub{session: session, ch: make(chan Event, 64)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		close(s.ch)
		return s.ch
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		if _, ok := b.subs[s]; ok {
			delete(b.subs, s)
			close(s.ch)
		}
		b.mu.Unlock()
	})
	return s.ch
}

func (b *Broker) publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.session != "" && s.session != e.Request.Session {
			continue // answers go home: a session sees only its own
		}
		select {
		case s.ch <- e:
		default:
		}
	}
}
