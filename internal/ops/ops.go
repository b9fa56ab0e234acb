// Package ops is what operators and their tools read from a running
// host over its console address: liveness (GET /healthz), readiness
// (GET /readyz: the store reachable, its schema current, this host's
// lease held) and Prometheus metrics (GET /metrics).
//
// /healthz and /readyz need no credential (a load balancer probes them)
// and say only "ok" or "not ready" with a reason class, never an error
// text. /metrics needs an API token with the read scope
// ("Authorization: Bearer …", `warden token create --scope read`): the
// metrics name rules and hosts, which a stranger has no business
// reading.
package ops

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/store"
)

// Tokens checks API tokens (*credential.Service).
type Tokens interface {
	Token(ctx context.Context, secret string) (store.Credential, error)
}

// Options configure Ops.
type Options struct {
	// Ready reports why the host is not ready, or nil.
	Ready func(ctx context.Context) error
	// Tokens checks /metrics' bearer tokens.
	Tokens Tokens
	// Pending counts the pending requests (every host's, on a shared
	// store).
	Pending func(ctx context.Context) (int, error)
	// Leases counts the kanban runs this host holds.
	Leases func(ctx context.Context) (int, error)
	// Hosts counts the hosts with a live lease (shared store only).
	Hosts func(ctx context.Context) (int, error)
}

// Ops serves the three endpoints and keeps the metrics.
type Ops struct {
	o   Options
	reg *prometheus.Registry

	decisions   *prometheus.CounterVec
	answer      prometheus.Histogram
	cronLag     prometheus.Histogram
	storeErrors prometheus.Counter
	reaped      *prometheus.CounterVec
}

// New returns Ops with its metrics registered.
func New(o Options) *Ops {
	reg := prometheus.NewRegistry()
	x := &Ops{o: o, reg: reg}
	x.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "warden_decisions_total",
		Help: "Audit records this host committed, by verdict and rule.",
	}, []string{"verdict", "rule"})
	x.answer = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "warden_answer_latency_seconds",
		Help:    "From a question's creation to a human's answer, for answers this host committed.",
		Buckets: []float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1800},
	})
	x.cronLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "warden_cron_lag_seconds",
		Help:    "From a cron slot's due time to its run's start, for runs this host claimed.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 5, 10, 30, 60},
	})
	x.storeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "warden_store_errors_total",
		Help: "Times this host found its store refusing work (a health check or a write).",
	})
	x.reaped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "warden_reaped_total",
		Help: "What this host ended for hosts that stopped renewing their leases: hosts, requests, cron_runs, task_runs.",
	}, []string{"what"})
	gauge := func(name, help string, f func(context.Context) (int, error)) {
		if f == nil {
			return
		}
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n, err := f(ctx)
			if err != nil {
				x.storeErrors.Inc()
				return -1
			}
			return float64(n)
		}))
	}
	gauge("warden_requests_pending", "Pending requests in the store (all hosts'); -1 if the store could not be read.", o.Pending)
	gauge("warden_worker_leases", "Kanban runs this host holds a lease on; -1 if the store could not be read.", o.Leases)
	gauge("warden_hosts_live", "Hosts holding a live lease on the shared store; -1 if the store could not be read.", o.Hosts)
	reg.MustRegister(x.decisions, x.answer, x.cronLag, x.storeErrors, x.reaped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return x
}

// Committed counts a commit's audit records: the store's Committed hook.
func (x *Ops) Committed(recs []store.Decision) {
	for _, d := range recs {
		x.decisions.WithLabelValues(d.Verdict, d.Rule).Inc()
		if d.By == "" || d.RequestID == "" || !strings.HasPrefix(d.Rule, store.RuleHuman+".") {
			continue
		}
		// A request's id is a ULID minted at its creation.
		if id, err := ulid.ParseStrict(d.RequestID); err == nil {
			x.answer.Observe(d.Time.Sub(ulid.Time(id.Time())).Seconds())
		}
	}
}

// CronClaimed observes the lag of the runs a claim started.
func (x *Ops) CronClaimed(runs []store.CronRun) {
	for _, r := range runs {
		if !r.Scheduled.IsZero() {
			x.cronLag.Observe(r.Started.Sub(r.Scheduled).Seconds())
		}
	}
}

// StoreError counts a store found refusing work.
func (x *Ops) StoreError() { x.storeErrors.Inc() }

// Reaped counts what a reap ended.
func (x *Ops) Reaped(hosts, requests, cronRuns, taskRuns int) {
	x.reaped.WithLabelValues("hosts").Add(float64(hosts))
	x.reaped.WithLabelValues("requests").Add(float64(requests))
	x.reaped.WithLabelValues("cron_runs").Add(float64(cronRuns))
	x.reaped.WithLabelValues("task_runs").Add(float64(taskRuns))
}

// Wrap serves the three endpoints and passes everything else to next.
func (x *Ops) Wrap(next http.Handler) http.Handler {
	metrics := promhttp.HandlerFor(x.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
		default:
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/healthz":
			_, _ = w.Write([]byte("ok\n"))
		case "/readyz":
			x.readyz(w, r)
		case "/metrics":
			if !x.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="warden"`)
				http.Error(w, "an API token with the read scope is needed (warden token create --scope read)", http.StatusUnauthorized)
				return
			}
			metrics.ServeHTTP(w, r)
		}
	})
}

func (x *Ops) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if x.o.Ready == nil {
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	if err := x.o.Ready(ctx); err != nil {
		var nr NotReady
		class := "store"
		if errors.As(err, &nr) {
			class = string(nr)
		}
		http.Error(w, "not ready: "+class, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// NotReady is a readiness failure's class, the only part /readyz tells:
// "store" (unreachable, faulted or a schema this binary does not
// want), "lease" (this host's lease was not renewed lately).
type NotReady string

func (n NotReady) Error() string { return "not ready: " + string(n) }

func (x *Ops) authorized(r *http.Request) bool {
	if x.o.Tokens == nil {
		return false
	}
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	c, err := x.o.Tokens.Token(r.Context(), strings.TrimSpace(secret))
	if err != nil {
		return false
	}
	return credential.Allows(c.Scopes, credential.Read)
}
