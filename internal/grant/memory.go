package grant

import (
	"context"
	"sync"
)

// Memory is a concurrency-safe in-process grant set. The host keeps
// grants in its store; Memory serves tests and `warden check --as`.
type Memory struct {
	mu     sync.RWMutex
	grants []Grant
}

// Add records a grant.
func (m *Memory) Add(g Grant) {
	m.mu.Lock()
	m.grants = append(m.grants, g)
	m.mu.Unlock()
}

// Grants returns the permanent grants and those of session.
func (m *Memory) Grants(_ context.Context, session string) ([]Grant, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Grant, 0, len(m.grants))
	for _, g := range m.grants {
		if g.Scope == Permanent || (session != "" && g.Session == session) {
			out = append(out, g)
		}
	}
	return out, nil
}
