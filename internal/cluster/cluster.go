// Package cluster is what a host does to share its store with other
// hosts (the PostgreSQL store): it holds a lease in the store and
// renews it, reaps the leases of hosts that stopped renewing theirs
// (their pending requests withdrawn, their cron runs recorded failed,
// their kanban claims reclaimed, once no process of them is on record), and follows the other hosts' request
// changes: an announcement wakes this host's waiter at once, and a poll
// about once a second repairs any announcement that was lost.
//
// A host that learns its own lease was reaped (it was stopped, or cut
// off from the database, for longer than the lease) must stop: Run
// returns store.ErrLeaseLost, and the host shuts down. Everything it
// held was already ended by the reaper, so nothing it did after can
// count: its requests are withdrawn (an answer is refused), its task
// runs ended (their steps are refused), its cron runs failed.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/store"
)

// Defaults.
const (
	// DefaultLease is how long a host's lease (and its kanban claims')
	// lasts unless renewed; a host is renewed every third of it.
	DefaultLease = 15 * time.Second
	// DefaultPoll is how often the pending requests are re-read, the
	// bound on a wake delayed by a lost announcement.
	DefaultPoll = time.Second
)

// Store is what the cluster needs of the shared store.
type Store interface {
	store.Hosts
	store.Watcher
	store.BoardStore
}

// Options configure a Member.
type Options struct {
	Store Store
	// ID is this host's id (its requests' Host), Addr its console.
	ID, Addr string
	// Broker is this host's broker: it gets the changes and withdraws
	// the requests of hosts that are gone.
	Broker *broker.Broker
	// Lease is the lease's length; zero means DefaultLease.
	Lease time.Duration
	// Poll is how often the pending requests are re-read; zero means
	// DefaultPoll.
	Poll time.Duration
	// FailureLimit is the kanban failure limit reclaimed runs count
	// against.
	FailureLimit int
	// Follow, if set, is called after each poll (the store moves this
	// host's audit anchors up the shared log).
	Follow func(ctx context.Context) error
	// Reaped, if set, hears what each reap ended.
	Reaped func(Reap)
	// Fence, if set, fences this machine's leftovers of dead spawners
	// (sandbox.Fence) before each reap, within ctx: a run that process
	// records still name is not reclaimed, so a host that died on this
	// machine has its runs retried once a live neighbour here, or its
	// successor, confirmed its processes gone. Another machine's
	// leftovers wait for that machine's fence.
	Fence  func(ctx context.Context) error
	Logger *slog.Logger
}

// Reap is what one reap pass ended.
type Reap struct {
	Hosts    []string
	Requests int
	CronRuns int
	TaskRuns int
}

// Member is this host's membership of the hosts sharing a store.
type Member struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	live    map[string]bool
	renewed time.Time
}

// Join registers this host's lease. Call it before the host writes
// anything that names it, and before its broker recovers.
func Join(ctx context.Context, o Options) (*Member, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("join the hosts: no store")
	case o.ID == "":
		return nil, errors.New("join the hosts: no host id")
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Member{o: o, log: o.Logger.With("component", "cluster")}
	if _, err := o.Store.JoinHost(ctx, store.HostLease{ID: o.ID, Addr: o.Addr}, o.Lease); err != nil {
		return nil, err
	}
	m.renewed = time.Now()
	if err := m.refresh(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// SetBroker sets the broker the member serves (the broker is built with
// the member's Alive, so after Join).
func (m *Member) SetBroker(b *broker.Broker) { m.o.Broker = b }

// Lease is the lease's length: the host's kanban claims use it too.
func (m *Member) Lease() time.Duration { return m.o.Lease }

// Alive reports whether host holds a live lease, as last read; an id
// not seen yet (a host that joined since) is looked up. It is the
// broker's Alive on a shared store.
func (m *Member) Alive(host string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return m.aliveNow(ctx, host)
}

// aliveNow re-reads the leases for an id it does not know; on a failed
// read it says alive (never withdraw on a guess).
func (m *Member) aliveNow(ctx context.Context, host string) bool {
	if host == m.o.ID {
		return true
	}
	m.mu.Lock()
	live, known := m.live[host]
	m.mu.Unlock()
	if known {
		return live
	}
	if err := m.refresh(ctx); err != nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[host]
}

// refresh re-reads the leases.
func (m *Member) refresh(ctx context.Context) error {
	hs, err := m.o.Store.ListHosts(ctx)
	if err != nil {
		return err
	}
	live := make(map[string]bool, len(hs))
	for _, h := range hs {
		live[h.ID] = h.Live
	}
	m.mu.Lock()
	m.live = live
	m.mu.Unlock()
	return nil
}

// Holding reports whether this host renewed its lease within the
// lease's length (readiness).
func (m *Member) Holding() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Since(m.renewed) < m.o.Lease
}

// Hosts lists the leases.
func (m *Member) Hosts(ctx context.Context) ([]store.HostLease, error) {
	return m.o.Store.ListHosts(ctx)
}

// Run renews the lease, reaps, follows the other hosts' changes and
// polls until ctx ends (then it returns nil) or the lease is lost
// (store.ErrLeaseLost: the host must stop).
func (m *Member) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	if m.o.Broker != nil {
		wg.Go(func() {
			_ = m.o.Store.WatchRequests(ctx, func(c store.Change) { m.o.Broker.Notice(ctx, c) })
		})
	}
	renew := time.NewTicker(m.o.Lease / 3)
	defer renew.Stop()
	poll := time.NewTicker(m.o.Poll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-renew.C:
			if err := m.renew(ctx); err != nil {
				if errors.Is(err, store.ErrLeaseLost) {
					m.log.ErrorContext(ctx, "this host's lease was reaped: stopping", "err", err)
					return err
				}
				m.log.WarnContext(ctx, "renew this host's lease", "err", err)
			}
			if err := m.reap(ctx); err != nil && ctx.Err() == nil {
				m.log.WarnContext(ctx, "reap hosts that are gone", "err", err)
			}
		case <-poll.C:
			if m.o.Broker != nil {
				m.o.Broker.Poll(ctx)
			}
			if m.o.Follow != nil {
				if err := m.o.Follow(ctx); err != nil && ctx.Err() == nil {
					m.log.WarnContext(ctx, "follow the audit head", "err", err)
				}
			}
		}
	}
}

func (m *Member) renew(ctx context.Context) error {
	_, err := m.o.Store.RenewHost(ctx, m.o.ID, m.o.Lease)
	if err == nil {
		m.mu.Lock()
		m.renewed = time.Now()
		m.mu.Unlock()
	}
	return err
}

// reap ends what the hosts that are gone held: expired leases are
// removed (with their cron runs), requests of hosts without a live
// lease withdrawn, kanban runs with expired leases reclaimed.
func (m *Member) reap(ctx context.Context) error {
	var rp Reap
	if m.o.Fence != nil {
		// Bounded well within the lease: a leftover that will not die
		// must not cost this host its own lease (its run just waits).
		fctx, cancel := context.WithTimeout(ctx, m.o.Lease/3)
		err := m.o.Fence(fctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.log.WarnContext(ctx, "fence this machine's leftovers of dead hosts", "err", err)
		}
	}
	reaped, runs, err := m.o.Store.ReapHosts(ctx, time.Time{}, "abandoned: the host running it stopped renewing its lease")
	if err != nil {
		return err
	}
	rp.CronRuns = runs
	for _, h := range reaped {
		rp.Hosts = append(rp.Hosts, h.ID)
		m.log.WarnContext(ctx, "reaped a host that stopped renewing its lease", "host", h.ID, "addr", h.Addr, "expired", h.Expires)
	}
	if err := m.refresh(ctx); err != nil {
		return err
	}
	var errs []error
	if m.o.Broker != nil {
		// Withdraw reads the pending requests before it asks about their
		// hosts, so a host not in the leases read above joined since:
		// look again before calling it gone.
		n, err := m.o.Broker.Withdraw(ctx, func(h string) bool { return m.aliveNow(ctx, h) }, "its host stopped renewing its lease")
		rp.Requests = n
		errs = append(errs, err)
	}
	ended, err := m.o.Store.ReclaimRuns(ctx, "reclaimed: its claimer stopped renewing its lease", m.o.FailureLimit, time.Time{})
	rp.TaskRuns = len(ended)
	errs = append(errs, err)
	if m.o.Reaped != nil && (len(rp.Hosts) > 0 || rp.Requests > 0 || rp.CronRuns > 0 || rp.TaskRuns > 0) {
		m.o.Reaped(rp)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reap: %w", err)
	}
	return nil
}

// Leave drops the lease (a clean stop): the other hosts need not wait
// for it to expire.
func (m *Member) Leave(ctx context.Context) error {
	return m.o.Store.LeaveHost(ctx, m.o.ID)
}
