package config

import (
	"net/url"
	"time"
)

// Cluster is the cluster: section: how hosts sharing a PostgreSQL
// store (store:) tell each other apart.
type Cluster struct {
	// Lease is how long a host's lease lasts unless renewed (it renews
	// every third of it): a host stopped or cut off for longer is reaped
	// by the others, its pending requests withdrawn, its cron runs
	// failed and its kanban claims reclaimed. Zero means the default
	// (15 seconds).
	Lease time.Duration
}

// MaxLease bounds cluster.lease.
const MaxLease = 10 * time.Minute

type rawCluster struct {
	Lease node `yaml:"lease"`
}

// store reads the top-level store: key, a postgres:// URL. Read once at
// start: a changed store takes effect at the next start.
func (v *validator) store(r node) string {
	n := r.n
	if n == nil {
		return ""
	}
	s, ok := v.str(n, "store")
	if !ok {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		v.errorf(n, "store: want a postgres:// URL (leave it out for the SQLite store in the state directory)")
		return ""
	}
	return s
}

// cluster reads the cluster: section.
func (v *validator) cluster(r *rawCluster) Cluster {
	var c Cluster
	if r == nil {
		return c
	}
	c.Lease = v.seconds(r.Lease.n, "cluster.lease", 0, int64(MaxLease/time.Second))
	return c
}
