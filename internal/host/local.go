package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/shellstate"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// LocalConfig configures an in-process gate for one terminal session.
type LocalConfig struct {
	// StateDir is the host's state directory: chat shares its store,
	// grants and audit chain.
	StateDir string
	// ConfigPath is the config file; missing means the defaults.
	ConfigPath string
	Paths      gate.Paths
	Environ    []string
	Logger     *slog.Logger
	// Commands builds the sandbox the session's commands run in (warden
	// chat). Without it the runner runs nothing (a hook only decides).
	Commands bool
	// sandboxProbe replaces the sandbox's kernel probe (tests).
	sandboxProbe func(context.Context) error
}

// Local is a gate, broker and runner of its own on the host's state
// directory, for warden chat: its decisions land in the same audit chain
// and its questions in the same request table (where warden approvals
// can see and answer them), but its waiters live in this process.
type Local struct {
	// ID identifies this process's broker (the Host of its requests).
	ID     string
	Store  store.Store
	Broker *broker.Broker
	Gate   *gate.Gate
	Runner *runner.Runner
	// Shell keeps the chat session's shell state (the host's
	// STATE/shellstate); drop it with Shell.Reset when the chat ends.
	Shell *shellstate.Manager
	// Sandbox runs the session's commands (nil without Commands).
	Sandbox *sandbox.Sandbox
	// ConfigStatus says which config was loaded, for the user.
	ConfigStatus string
	// Agent is the session's agent (llm:, mcp.servers); without a model
	// it is not Configured and AgentStatus says how to configure one.
	Agent       *agent.Agent
	AgentStatus string

	agents *agents

	db *sqlite.DB
}

// OpenLocal opens the store and builds the gate, broker and runner. It
// does not recover earlier requests: a running host owns those.
func OpenLocal(ctx context.Context, cfg LocalConfig) (*Local, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// As the host: nothing of its user may read this process's memory.
	_ = sandbox.HideSelf()
	state, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	paths := cfg.Paths
	paths.Protected = append(append([]string(nil), paths.Protected...), state)
	if cfg.ConfigPath != "" {
		paths.Protected = append(paths.Protected, cfg.ConfigPath)
	}
	pol, conf, status, err := loadOnce(cfg.ConfigPath, paths, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	db, err := sqlite.OpenWith(ctx, filepath.Join(state, DBName), sqlite.Options{Anchors: AnchorSinks(conf.Audit), Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	l := &Local{ID: newID("local-"), Store: db, ConfigStatus: status, db: db}
	if cfg.Commands {
		if l.Sandbox, err = NewSandbox(ctx, SandboxFacts{
			StateDir: state, ConfigPath: cfg.ConfigPath, Paths: paths, Environ: cfg.Environ, Config: conf,
			Spawner: l.ID, Recorder: db, Probe: cfg.sandboxProbe, Logger: cfg.Logger,
		}); err != nil {
			db.Close()
			return nil, fmt.Errorf("open local gate: %w", err)
		}
		db.SetSandboxLabel(sandbox.Label(l.Sandbox))
	}
	l.Broker = broker.New(broker.Options{Requests: db, Grants: db, Host: l.ID, Alive: alive, Timeout: pol.Timeout, Logger: cfg.Logger})
	if l.agents, err = newAgents(agentDeps{cfg: conf, environ: cfg.Environ, convs: db, logger: cfg.Logger, sandbox: l.Sandbox}); err != nil {
		db.Close()
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	if l.Gate, err = gate.New(gate.Options{Policy: pol, Grants: db, Sessions: db, Guardian: l.agents.guardian}); err != nil {
		l.agents.close()
		db.Close()
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	term := tools.Terminal{Env: execenv.Build(cfg.Environ, conf.Tools.EnvPassthrough, nil), Sandbox: l.Sandbox}
	if l.Shell, err = shellstate.New(shellstate.Options{Dir: filepath.Join(state, ShellStateDir), Terminal: term, Logger: cfg.Logger}); err != nil {
		l.agents.close()
		db.Close()
		return nil, fmt.Errorf("open local gate: %w", err)
	}
	l.Runner = runner.New(runner.Options{
		Gate: l.Gate, Broker: l.Broker, Audit: db, Logger: cfg.Logger,
		Terminal: term, Sessions: shellSessions{l.Shell},
	})
	l.agents.bind(l.Runner)
	l.Agent, l.AgentStatus = l.agents.agent, l.agents.describe
	return l, nil
}

// Close withdraws this process's pending requests with cause and closes
// the store.
func (l *Local) Close(ctx context.Context, cause string) error {
	l.Broker.Close(ctx, cause)
	l.agents.close()
	if err := l.db.Close(); err != nil {
		return fmt.Errorf("close local gate: %w", err)
	}
	return nil
}

// loadOnce loads and compiles the config without watching it; a
// missing file gives the defaults.
func loadOnce(path string, paths gate.Paths, logger *slog.Logger) (*gate.Policy, *config.Config, string, error) {
	var cfg *config.Config
	status := "none; safe defaults (approvals.mode manual, every unattended mode deny)"
	if path != "" {
		c, warnings, err := config.Load(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			status = path + " (not found; safe defaults: approvals.mode manual, every unattended mode deny)"
		case err != nil:
			return nil, nil, "", fmt.Errorf("config %s: %w", path, err)
		default:
			cfg, status = c, fmt.Sprintf("%s (loaded, sha256:%.12s…)", path, c.Digest)
			for _, w := range warnings {
				logger.Warn("config warning", "component", "config", "warning", w.String())
			}
		}
	}
	p, err := gate.Compile(cfg, withAnchor(paths, cfg))
	if err != nil {
		return nil, nil, "", fmt.Errorf("config %s: %w", path, err)
	}
	if cfg == nil {
		cfg = config.Default()
	}
	return p, cfg, status, nil
}
