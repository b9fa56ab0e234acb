package workerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// DefaultLease is the lease of a remote worker's run.
const DefaultLease = 30 * time.Second

// EventLease is the host's answer to a heartbeat: Data is the lease in
// milliseconds.
const EventLease = "lease"

// ErrLeaseLapsed is the cause of a remote connection's end when its
// run's lease lapsed, and what a remote worker's context ends with when
// it has had no acknowledgement for half the lease.
var ErrLeaseLapsed = errors.New("the run's lease lapsed")

// lease is a remote run's lease. Its fields are guarded by Server.mu.
type lease struct {
	run      string
	expires  time.Time
	attached bool
	// cancel ends the connection bound to the run (nil before hello).
	cancel context.CancelCauseFunc
}

// Issue makes run (claimed for a remote worker, with a token minted for
// it) acceptable on the TLS listener until helloBy; once a worker said
// hello for it, its lease is Options.Lease from each message the worker
// sends. A run issued but never claimed by helloBy, or whose worker
// falls silent, is failed (its task goes back to ready or, at the
// failure limit, blocked) by ServeRemote.
func (s *Server) Issue(run string, helloBy time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.leases[run]; ok {
		return fmt.Errorf("issue run %s: already issued", run)
	}
	s.leases[run] = &lease{run: run, expires: helloBy}
	return nil
}

// Issued reports whether run was issued to a remote worker and its
// lease is held.
func (s *Server) Issued(run string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.leases[run]
	return ok
}

// attach binds run's lease to a connection saying hello for it: run must
// have been issued to a remote worker, have no worker process of this
// host, be running, and not be bound already.
func (s *Server) attach(run store.TaskRun, cancel context.CancelCauseFunc) (*lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.leases[run.ID]
	switch {
	case l == nil:
		return nil, errors.New("the run was not issued to a remote worker")
	case l.attached:
		return nil, errors.New("the run's remote worker already said hello")
	case run.PID != 0:
		return nil, errors.New("the run has a local worker process")
	case run.Status != store.TaskRunRunning:
		return nil, errors.New("the run is not running")
	}
	l.attached, l.cancel = true, cancel
	l.expires = s.o.Now().Add(s.o.Lease)
	return l, nil
}

// renew extends l from now; false when it is no longer held (lapsed or
// ended).
func (s *Server) renew(l *lease) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases[l.run] != l {
		return false
	}
	l.expires = s.o.Now().Add(s.o.Lease)
	return true
}

// release forgets the connection's lease: its run ended.
func (cn *conn) release() {
	l := cn.lease.Load()
	if l == nil {
		return
	}
	cn.s.mu.Lock()
	defer cn.s.mu.Unlock()
	if cn.s.leases[l.run] == l {
		delete(cn.s.leases, l.run)
	}
}

// isHeartbeat reports whether line is a heartbeat (verb heartbeat, id 0).
func isHeartbeat(line []byte) bool {
	var r struct {
		ID   uint64 `json:"id"`
		Verb string `json:"verb"`
	}
	return json.Unmarshal(line, &r) == nil && r.ID == 0 && r.Verb == VerbHeartbeat
}

// keepLeases fails the remote runs whose lease lapsed, and forgets
// those that ended otherwise (an operator moved the task), closing their
// connections, until ctx ends.
func (s *Server) keepLeases(ctx context.Context) {
	t := time.NewTicker(max(s.o.Lease/8, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweep(ctx)
	}
}

// sweep is one look at the leases.
func (s *Server) sweep(ctx context.Context) {
	now := s.o.Now()
	var lapsed, open []*lease
	s.mu.Lock()
	for id, l := range s.leases {
		if !now.Before(l.expires) {
			delete(s.leases, id)
			lapsed = append(lapsed, l)
		} else {
			open = append(open, l)
		}
	}
	s.mu.Unlock()
	for _, l := range lapsed {
		// The connection first: the worker learns it on its next call,
		// and no decision is made for the run after this.
		if l.cancel != nil {
			l.cancel(ErrLeaseLapsed)
		}
		t, err := s.o.Board.Fail(context.WithoutCancel(ctx), l.run, "the remote worker's lease lapsed", s.o.FailureLimit)
		switch {
		case errors.Is(err, store.ErrTaskRunEnded):
		case err != nil:
			s.log.ErrorContext(ctx, "fail a lapsed remote run", "run", l.run, "err", err)
		default:
			s.log.WarnContext(ctx, "a remote worker's lease lapsed", "run", l.run, "task", t.ID, "task_status", t.Status)
		}
		if s.o.Lapsed != nil {
			s.o.Lapsed(l.run)
		}
	}
	for _, l := range open {
		r, err := s.o.Board.Run(ctx, l.run)
		if err != nil || r.Status == store.TaskRunRunning {
			continue
		}
		s.mu.Lock()
		if s.leases[l.run] == l {
			delete(s.leases, l.run)
		}
		cancel := l.cancel
		s.mu.Unlock()
		if cancel != nil {
			cancel(fmt.Errorf("%w: the run has ended", ErrLeaseLapsed))
		}
	}
}
