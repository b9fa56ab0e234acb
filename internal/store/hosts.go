package store

import (
	"context"
	"errors"
	"time"
)

// ErrLeaseLost: a lease expired and was taken from its holder (the
// host's lease was reaped, the task run reclaimed); the holder must stop
// the work the lease covered.
var ErrLeaseLost = errors.New("lease lost")

// HostLease is one process sharing a store: a host, or a local gate
// beside it. It is alive while its lease has not expired. Lease times
// are the store's clock (PostgreSQL's on its server), so the hosts'
// own clocks need not agree.
type HostLease struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started_at"`
	// Renewed is when the lease was last renewed and Expires when it
	// ends unless renewed again.
	Renewed time.Time `json:"renewed_at"`
	Expires time.Time `json:"expires_at"`
	// Live reports whether Expires was still ahead when the row was
	// read.
	Live bool `json:"live"`
	// Addr is where its console listens, for operators.
	Addr string `json:"addr,omitempty"`
}

// Hosts keeps the leases of the processes that share a store. A
// process joins before it writes anything that names it (requests, cron
// runs, task claims), renews its lease well within the lease's length,
// and leaves when it stops. A lease that expired is reaped by whoever
// notices first: the requests its host held are withdrawn and its cron
// runs recorded failed by the reaper, and its host, on its next renewal,
// learns ErrLeaseLost and must stop.
type Hosts interface {
	// JoinHost registers h.ID with a lease of ttl and returns it as
	// stored; an id that is taken is an error.
	JoinHost(ctx context.Context, h HostLease, ttl time.Duration) (HostLease, error)
	// RenewHost extends id's lease to ttl from now. A lease that
	// expired but was not reaped yet is renewed too; one that was reaped
	// (or never existed) gives ErrLeaseLost.
	RenewHost(ctx context.Context, id string, ttl time.Duration) (HostLease, error)
	// LeaveHost drops id's lease (a clean stop); an unknown id is fine.
	LeaveHost(ctx context.Context, id string) error
	// ListHosts lists every lease, expired ones included, by id.
	ListHosts(ctx context.Context) ([]HostLease, error)
	// ReapHosts removes every expired lease, records the running cron
	// runs of hosts that hold no live lease failed with reason at at,
	// and returns the leases it removed and how many runs it failed. A
	// cron run that process records name (CronRunKey) stays running
	// until a fence forgets them (a later reap fails it).
	// Of two concurrent reapers, each lease goes to one.
	ReapHosts(ctx context.Context, at time.Time, reason string) ([]HostLease, int, error)
}

// Change is a request created or ended, as the process that committed
// it announces it to the others sharing the store.
type Change struct {
	// Request is the request's id; empty for a Resync.
	Request string
	// Ended is true when the request ended, false when it was created.
	Ended bool
	// Origin names the process that committed the change ("" unknown).
	Origin string
	// Resync: announcements may have been lost (the watcher's
	// connection was re-established): the watcher should re-read what
	// it holds.
	Resync bool
}

// Watcher is a store shared by several processes that announces each
// committed request change to every process. Announcements are a hint:
// one can be lost, so a watcher also polls, and the committed row is
// always the truth.
type Watcher interface {
	// WatchRequests calls fn with each change until ctx ends, then
	// returns ctx's error. It reconnects by itself after a failure and
	// then calls fn with a Resync change.
	WatchRequests(ctx context.Context, fn func(Change)) error
}
