// Package runnertest builds the real parts behind a runner for tests: a
// SQLite store in a temporary directory, a gate compiled from a YAML
// policy, an optional broker, and the runner on top of them, all closed
// by t.Cleanup in the order the host closes them (broker first, store
// last).
//
// It is imported by _test.go files only (internal/archtest enforces
// that for every package named *test); nothing in it is a fake:
//
//	f := runnertest.New(t, runnertest.Options{Policy: "approvals:\n  cron_mode: approve\n"})
//	o, code, err := f.Runner.Shell(runnertest.Cron(t, "j", "r"), "rm -rf ./build", dir, &out, &out, nil)
//	recs, _ := f.DB.Decisions(ctx, store.AuditFilter{})
package runnertest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// DBName is the store's file name in its directory, as the host names it.
const DBName = "warden.db"

// Options say what to build. The zero value is a runner on the default
// policy with no broker (a question is a deny) and the Terminal below.
type Options struct {
	// Policy is the config file's YAML; "" is the safe defaults.
	Policy string
	// Paths are the gate's home and protected paths.
	Paths gate.Paths
	// Dir is the directory the store lives in (the host's state
	// directory); "" is a fresh t.TempDir().
	Dir string
	// Ask, when positive, gives the runner a broker whose questions wait
	// this long for an answer.
	Ask time.Duration
	// Terminal is what shell commands run with; the zero value is
	// Terminal(t). A Terminal without a Sandbox gets a real one
	// (sandboxtest) hiding Hide, as the host's terminal does.
	Terminal tools.Terminal
	// Hide are paths the sandbox hides (the host hides its state
	// directory and config); only used when Terminal has no Sandbox.
	Hide []string
	// Sessions keeps sessions' shell state (nil: none).
	Sessions runner.Sessions
	// Logger receives the broker's and the runner's logs (nil: none).
	Logger *slog.Logger
	// Gate, if set, adjusts the gate's options before it is built
	// (process yolo, a guardian).
	Gate func(*gate.Options)
}

// Fixture is what New built.
type Fixture struct {
	// Dir is the store's directory.
	Dir string
	DB  *sqlite.DB
	// Gate decides with the compiled Options.Policy, grants and session
	// switches from DB.
	Gate *gate.Gate
	// Broker is nil unless Options.Ask is positive.
	Broker *broker.Broker
	// Terminal is what the runner runs commands with (its Sandbox too).
	Terminal tools.Terminal
	Runner   *runner.Runner
}

// New builds a store, gate, broker (with Options.Ask) and runner, closed
// when the test ends.
func New(t testing.TB, o Options) *Fixture {
	t.Helper()
	f := &Fixture{Dir: o.Dir}
	if f.Dir == "" {
		f.Dir = t.TempDir()
	}
	f.DB = StoreAt(t, filepath.Join(f.Dir, DBName))
	gopts := gate.Options{Policy: Policy(t, o.Policy, o.Paths), Grants: f.DB, Sessions: f.DB}
	if o.Gate != nil {
		o.Gate(&gopts)
	}
	g, err := gate.New(gopts)
	if err != nil {
		t.Fatal(err)
	}
	f.Gate = g
	if o.Ask > 0 {
		f.Broker = Broker(t, f.DB, o.Ask, o.Logger)
	}
	term := o.Terminal
	if term.Env == nil && term.Timeout == 0 && term.Sandbox == nil {
		term = Terminal(t, o.Hide...)
	} else if term.Sandbox == nil {
		term.Sandbox = sandboxtest.New(t, o.Hide...)
	}
	f.Terminal = term
	f.Runner = runner.New(runner.Options{Gate: g, Broker: f.Broker, Audit: f.DB, Logger: o.Logger, Terminal: term, Sessions: o.Sessions})
	return f
}

// Store opens a fresh store in a temporary directory, closed when the
// test ends.
func Store(t testing.TB) *sqlite.DB {
	t.Helper()
	return StoreAt(t, filepath.Join(t.TempDir(), DBName))
}

// StoreAt opens the store at path, closed when the test ends.
func StoreAt(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Policy compiles a YAML policy ("" is the defaults) with paths.
func Policy(t testing.TB, yaml string, paths gate.Paths) *gate.Policy {
	t.Helper()
	var cfg *config.Config
	if yaml != "" {
		var err error
		if cfg, _, err = config.Parse([]byte(yaml), "test.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	p, err := gate.Compile(cfg, paths)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Broker is a broker on db's requests and grants whose questions wait
// timeout, closed when the test ends (before the store, if the store was
// opened first).
func Broker(t testing.TB, db *sqlite.DB, timeout time.Duration, logger *slog.Logger) *broker.Broker {
	t.Helper()
	b := broker.New(broker.Options{Requests: db, Grants: db, Host: "test", Timeout: timeout, Logger: logger})
	t.Cleanup(func() { b.Close(context.Background(), "test over") })
	return b
}

// Terminal is the terminal tests run commands with: the usual PATH, a
// UTF-8 locale, a minute's timeout and a real sandbox hiding hide
// (sandboxtest: skipped, or failed under WARDEN_FULL=1, where the kernel
// cannot sandbox). Commands see the workspace (their directory) and the
// system, not other temporary directories: /tmp is private inside.
func Terminal(t testing.TB, hide ...string) tools.Terminal {
	t.Helper()
	return tools.Terminal{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, Timeout: time.Minute, Sandbox: sandboxtest.New(t, hide...)}
}

// As binds o to a fresh context, failing the test on err (the owner
// constructors' error).
func As(t testing.TB, o owner.Owner, err error) context.Context {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return owner.With(context.Background(), o)
}

// Cron is the context of run of cron job.
func Cron(t testing.TB, job, run string) context.Context {
	t.Helper()
	o, err := owner.Cron(job, run)
	return As(t, o, err)
}

// Logger logs at warn level and above to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}
