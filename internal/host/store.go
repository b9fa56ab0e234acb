package host

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/internal/anchor"
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
			Origin: h.id, Logger: h.cfg.Logger, Committed: h.cfg.committed,
		})
		if err != nil {
			return nil, err
		}
		h.pg = db
		return db, nil
	}
	opts := sqlite.Options{Anchors: AnchorSinks(h.pol.start.Audit), Logger: h.cfg.Logger, Committed: h.cfg.committed}
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

