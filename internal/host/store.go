package host

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/ops"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/postgres"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// PGAnchorName is this host's sidecar audit anchor in the state
// directory when the store is PostgreSQL: the shared log's head as this
// host last saw it.
const PGAnchorName = "postgres.anchor"

// backend is what the host keeps in its store: SQLite in the state
// directory, or PostgreSQL shared with other hosts.
type backend interface {
	store.Store
	store.Conversations
	store.CronStore
	store.BoardStore
	store.Credentials
	store.Hosts
	store.ChatPosts
	// Processes are the sandbox's records (sandbox.Recorder,
	// sandbox.Records): fencing reads them at start and at each reap.
	store.Processes
	// SetSandboxLabel labels the audit records the store writes itself.
	SetSandboxLabel(label string)
	// Fault says since when and why the store refuses work.
	Fault() (time.Time, error)
	// Head is the audit head as the store last committed or saw it.
	Head() anchor.Head
	// FlushAnchors waits for the anchors to hold every commit's head.
	FlushAnchors(ctx context.Context) error
}

var (
	_ backend = (*sqlite.DB)(nil)
	_ backend = (*postgres.DB)(nil)
)

// storeURL is the shared store's address: the --store flag, else the
// config's store: key; "" means SQLite.
func (h *host) storeURL() string {
	if h.cfg.Store != "" {
		return h.cfg.Store
	}
	return h.pol.start.Store
}

// openStore opens the store the host was configured with.
func (h *host) openStore(ctx context.Context) (backend, error) {
	if u := h.storeURL(); u != "" {
		db, err := postgres.Open(ctx, u, postgres.Options{
			Anchor: filepath.Join(h.cfg.StateDir, PGAnchorName), Anchors: AnchorSinks(h.pol.start.Audit),
			Origin: h.id, Logger: h.cfg.Logger, Committed: h.committed,
		})
		if err != nil {
			return nil, err
		}
		h.pg = db
		return db, nil
	}
	opts := sqlite.Options{Anchors: AnchorSinks(h.pol.start.Audit), Logger: h.cfg.Logger, Committed: h.committed}
	if h.cfg.tune != nil {
		h.cfg.tune(&opts)
	}
	return sqlite.OpenWith(ctx, filepath.Join(h.cfg.StateDir, DBName), opts)
}

// claimLease is the lease of this host's kanban claims: the cluster's
// lease on a shared store, none on SQLite (a restarted host fails its
// predecessor's runs at start).
func (h *host) claimLease() time.Duration {
	if h.member == nil {
		return 0
	}
	return h.member.Lease()
}

// describeStore is the store's line in the banner.
func (h *host) describeStore() string {
	if h.pg != nil {
		return fmt.Sprintf("PostgreSQL %s (schema %s), shared; lease %s", postgres.Redact(h.storeURL()), h.pg.Schema(), h.member.Lease())
	}
	return filepath.Join(h.cfg.StateDir, DBName) + " (SQLite)"
}

// committed hears each commit's audit records (the store's Committed
// hook): the metrics count them.
func (h *host) committed(recs []store.Decision) {
	h.ops.Committed(recs)
	if h.cfg.committed != nil {
		h.cfg.committed(recs)
	}
}

// newOps builds the health, readiness and metrics endpoints.
func (h *host) newOps() *ops.Ops {
	return ops.New(ops.Options{
		Ready:  h.ready,
		Tokens: tokens{h},
		Pending: func(ctx context.Context) (int, error) {
			rs, err := h.db.PendingRequests(ctx, "")
			return len(rs), err
		},
		Leases: func(ctx context.Context) (int, error) {
			rs, err := h.db.RunningRuns(ctx)
			n := 0
			for _, r := range rs {
				if r.Holder == h.id {
					n++
				}
			}
			return n, err
		},
		Hosts: func(ctx context.Context) (int, error) {
			if h.member == nil {
				return 1, nil
			}
			hs, err := h.member.Hosts(ctx)
			n := 0
			for _, x := range hs {
				if x.Live {
					n++
				}
			}
			return n, err
		},
	})
}

// tokens checks /metrics' tokens once the credential service exists.
type tokens struct{ h *host }

func (t tokens) Token(ctx context.Context, secret string) (store.Credential, error) {
	return t.h.creds.Token(ctx, secret)
}

// ready is readiness: the store accepts work, answers, and has the
// schema this binary wants; on a shared store, this host's lease holds.
func (h *host) ready(ctx context.Context) error {
	if _, err := h.db.Fault(); err != nil {
		return ops.NotReady("store")
	}
	if h.pg != nil {
		if err := h.pg.Ping(ctx); err != nil {
			return ops.NotReady("store")
		}
		if !h.member.Holding() {
			return ops.NotReady("lease")
		}
	}
	return nil
}

// cronMetrics observes the lag of the runs the scheduler claims.
type cronMetrics struct {
	store.CronStore
	ops *ops.Ops
}

func (c cronMetrics) ClaimDue(ctx context.Context, now time.Time, host string, plan store.CronPlan) ([]store.CronRun, error) {
	runs, err := c.CronStore.ClaimDue(ctx, now, host, plan)
	c.ops.CronClaimed(runs)
	return runs, err
}

// fenceDead fences this machine's leftovers of hosts (and local gates)
// that died since the start's fence, before the cluster reclaims their
// runs (cluster.Options.Fence). It runs only once the store is open;
// the sandbox need not exist yet (Fence reads the records, not it).
func (h *host) fenceDead(ctx context.Context) error {
	fenced, err := sandbox.Fence(ctx, h.db)
	for _, p := range fenced {
		h.log.WarnContext(ctx, "fenced a leftover of a dead host on this machine", "pid", p.PID, "what", p.What, "owner", p.Owner, "run", p.Run, "spawner", p.Spawner)
	}
	return err
}
