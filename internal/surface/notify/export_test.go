package notify

import "context"

// Deliver runs n's retry loop for one event to s.
func Deliver(ctx context.Context, n *Notifier, s Sink, e Event) error { return n.deliver(ctx, s, e) }

// Scheduled returns how many pushes wait for their time, and how many
// were made.
func Scheduled(n *Notifier) (waiting, sent int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.pending), len(n.sent)
}
