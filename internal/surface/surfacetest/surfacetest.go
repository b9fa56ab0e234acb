// Package surfacetest builds, for tests of surfaces, the host's side of
// internal/surface on real parts: an SQLite store in a temporary
// directory, the broker, the gate with the default policy, the runner
// with a real terminal, and optionally an agent.
package surfacetest

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// Options configure a Host.
type Options struct {
	// Timeout is how long questions wait; a minute if zero.
	Timeout time.Duration
	// Model, if set, gives the host an agent.
	Model llm.Client
	// DB reuses a store (a restart on the same file); nil opens a new one.
	DB *sqlite.DB
	// HostID names the broker ("test" if empty).
	HostID string
}

// Host is the host's surface interface on real parts.
type Host struct {
	*hostsurface.Surface
	DB     *sqlite.DB
	Broker *broker.Broker
	Runner *runner.Runner
	// Dir is the working directory of commands.
	Dir string
}

// logWriter sends log lines to the test's output.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Logger logs warnings and errors to the test.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Open opens a store in a new temporary directory, closed when the test
// ends.
func Open(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// New returns a Host; its broker is closed when the test ends.
func New(t testing.TB, o Options) *Host {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	if o.HostID == "" {
		o.HostID = "test"
	}
	db := o.DB
	if db == nil {
		db = Open(t)
	}
	log := Logger(t)
	b := broker.New(broker.Options{Requests: db, Grants: db, Host: o.HostID, Timeout: o.Timeout, Logger: log})
	t.Cleanup(func() { b.Close(context.Background(), "test over") })
	g, err := gate.New(gate.Options{Grants: db, Sessions: db})
	if err != nil {
		t.Fatal(err)
	}
	pol := g.Policy()
	pol.Timeout = o.Timeout
	g.SetPolicy(pol)
	term := tools.Terminal{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, Timeout: time.Minute, Sandbox: sandboxtest.New(t)}
	r := runner.New(runner.Options{Gate: g, Broker: b, Audit: db, Logger: log, Terminal: term})
	dir := t.TempDir()
	p := hostsurface.Parts{Broker: b, Requests: db, Sessions: db, Runner: r, Dir: dir, Console: "http://127.0.0.1:7878/", Logger: log}
	if o.Model != nil {
		p.Agent = agent.New(agent.Options{Model: o.Model, Exec: r, Conversations: db, Logger: log})
	}
	return &Host{Surface: hostsurface.New(p), DB: db, Broker: b, Runner: r, Dir: dir}
}

// Report adds the median and the 99th percentile of ds to b's results
// as NAME-p50-ms and NAME-p99-ms.
func Report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	b.ReportMetric(float64(at(0.50))/float64(time.Millisecond), name+"-p50-ms")
	b.ReportMetric(float64(at(0.99))/float64(time.Millisecond), name+"-p99-ms")
}
