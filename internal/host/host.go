// Package host is `warden serve`: it wires the store, the gate, the
// broker, the runner, the cron scheduler, the web console and the admin
// API into one process, and takes them down in order. It is wiring
// only; every decision lives in the packages it wires.
//
// The cron scheduler runs for the host's lifetime with the host's
// runner, so every step is decided by the same gate as the sessions
// beside it, as the run's own cron owner. Steps run in the scratch
// directory's cron/ workspace, never inside the state directory, where
// a relative path would reach the store.
//
// The kanban dispatcher (internal/dispatch) runs for the host's
// lifetime too: it claims ready tasks and spawns `warden worker` for
// each, whose actions the same gate decides as the run's kanban owner;
// a worker may start a cron run, whose owner has the kanban run as its
// parent. The admin socket refuses any peer that descends from the host
// (a tool run, a worker or anything they started): invariant 11.
//
// Shutdown (ctx cancelled by SIGINT/SIGTERM): stop accepting
// connections, withdraw every pending request with the cause "host
// shutting down" (their waiters wake and deny), cancel running commands
// and cron runs (recorded failed), close the console and the servers,
// close the store, and remove the socket.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/cluster"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/dispatch"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/ops"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/shellstate"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/postgres"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/surface/web"
	"github.com/wardenhq/warden/internal/tools"
)

// DefaultAddr is where the web console listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7878"

// File names in the state directory.
const (
	DBName = "warden.db"
	// OldTokenName is where warden kept a console admin token before
	// login links: a start removes the file (it no longer logs in).
	OldTokenName = "token"
	// CronDir is the cron steps' working directory in the scratch
	// directory (mode 0700).
	CronDir = "cron"
	// ConsoleDir is the console's working directory in the scratch
	// directory when the host's own cannot be a writable workspace (it
	// is / or holds the home directory, as a service's often does).
	ConsoleDir = "console"
	// ShellStateDir holds the terminal sessions' shell state in the
	// state directory (mode 0700, files 0600).
	ShellStateDir = "shellstate"
)

// shutdownGrace bounds how long shutdown waits for handlers to finish
// after their work was withdrawn and cancelled.
const shutdownGrace = 5 * time.Second

// ErrRemote: a non-loopback console address without AllowRemote.
var ErrRemote = errors.New("non-loopback address")

// Config configures a host. The CLI resolves every path and passes the
// process environment in; the host reads neither flags nor environment.
type Config struct {
	// StateDir holds the store and the sockets. It is created mode
	// 0700.
	StateDir string
	// ConfigPath is the YAML config file. A missing file means safe
	// defaults until it appears; "" means defaults, no file.
	ConfigPath string
	// Addr is the web console's HOST:PORT; DefaultAddr if empty. A
	// non-loopback address is refused unless AllowRemote.
	Addr        string
	AllowRemote bool
	// ConsoleHosts are extra Host header values the console accepts: the
	// name a reverse proxy in front of it is reached by. Loopback names
	// and the listening address are always accepted.
	ConsoleHosts []string
	// Yolo is process yolo: attended owners' dangerous actions run
	// without asking (the floors still apply). Fixed at start.
	Yolo bool
	// Stdout receives the startup lines; nil discards them.
	Stdout io.Writer
	// Logger receives the components' logs; nil discards them.
	Logger *slog.Logger
	// Environ is the process environment as NAME=VALUE: the parent that
	// execenv filters for every command the host runs.
	Environ []string
	// Paths are host facts for the policy (home directory, protected
	// paths). The state directory and config file are always added to
	// Protected.
	Paths gate.Paths
	// ScratchDir holds the workspaces: the cron steps' (CronDir) and
	// one per scratch kanban task. It must be absolute and neither
	// inside the state directory nor holding it.
	ScratchDir string
	// Executable is the warden binary the dispatcher spawns as
	// `EXECUTABLE worker --task ID`; "" means this process's own
	// executable.
	Executable string
	// Ready, if set, is called once the host serves.
	Ready func(Info)
	// Limits are the console's and the admin socket's timeouts and
	// connection caps (per remote IP on the console, per peer uid on the
	// socket); zero fields mean connlimit.Defaults.
	Limits connlimit.Limits
	// Store is a postgres:// URL of a store shared with other hosts; it
	// overrides the config's store: key. "" (and no store: key) keeps
	// the SQLite store in the state directory.
	Store string

	// wrap lets tests observe the store; tune lets tests and benchmarks
	// set the store's options (group commit, the commit hook).
	wrap func(store.Store) store.Store
	// sandboxProbe, if set, replaces the sandbox's kernel probe: tests
	// simulate a kernel that cannot sandbox.
	sandboxProbe func(context.Context) error
	tune         func(*sqlite.Options)
	// committed hears the records of each commit (the metrics).
	committed func([]store.Decision)
}

// Info describes a running host.
type Info struct {
	ID         string
	ConsoleURL string
	Socket     string
}

// Run runs the host until ctx is cancelled, then shuts it down in order.
// Cancellation is the normal way to stop and is not an error.
func Run(ctx context.Context, cfg Config) error {
	h, err := start(ctx, cfg)
	if err != nil {
		return err
	}
	return h.serve(ctx)
}

// host is one running host.
type host struct {
	cfg Config
	id  string
	log *slog.Logger
	out io.Writer
	db  backend
	// pg is the shared store (nil on SQLite) and member this host's
	// lease among the hosts sharing it.
	pg     *postgres.DB
	member *cluster.Member
	// ops serves /healthz, /readyz and /metrics on the console address.
	ops    *ops.Ops
	st     store.Store
	boards *board.Service // the one board service: console, local API (so the CLI), dispatcher
	pol    *policyLoader
	broker *broker.Broker
	gate   *gate.Gate
	runner *runner.Runner
	// shell keeps the terminal sessions' state (STATE/shellstate).
	shell *shellstate.Manager
	cron  *cron.Scheduler
	// cronDir is the steps' workspace and cronJobs the jobs stored at
	// start (for the banner).
	cronDir  string
	cronJobs int
	// dispatch runs the kanban workers; groups are their process groups,
	// which the admin boundary refuses.
	dispatch *dispatch.Dispatcher
	groups   *ancestry.Groups
	// agents are the model, guardian, MCP client and agent (llm:, mcp:).
	agents *agents
	// sandbox starts every process the host runs for an agent; fenced
	// counts the leftovers of an earlier host it killed at start.
	sandbox *sandbox.Sandbox
	fenced  int
	// consoleDir is where console sessions' commands run ("" for the
	// host's working directory).
	consoleDir string

	console *web.Console
	api     *localapi.Server
	// creds issues and checks login links, console sessions and API
	// tokens (kept hashed in the store).
	creds *credential.Service
	// surface is what every surface may do (internal/surface); chats are
	// the chat surfaces and notifiers built on it.
	surface *hostsurface.Surface
	chats   *chats
	// oldToken is set when this start removed a token file left by an
	// older warden.
	oldToken bool
	webLn    net.Listener
	sockLn   net.Listener
	// remoteAddr and remoteFP are the remote workers' TLS listener and
	// its certificate's fingerprint ("" when kanban.remote is off).
	remoteAddr, remoteFP string
	socket               string
	info                 Info
}

// start builds everything and opens the listeners; on error it undoes
// what it did.
func start(ctx context.Context, cfg Config) (_ *host, err error) {
	if cfg.StateDir == "" {
		return nil, errors.New("start host: no state directory")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if err := checkAddr(cfg.Addr, cfg.AllowRemote); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	// The host holds the model's key and answers approvals: no process
	// of its user may trace it or read its environment and memory.
	if err := sandbox.HideSelf(); err != nil {
		cfg.Logger.Warn("could not make the host non-dumpable: processes of its user can read its memory", "err", err)
	}
	state, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("start host: state directory: %w", err)
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("start host: state directory: %w", err)
	}
	cfg.StateDir = state
	if cfg.ScratchDir == "" {
		return nil, errors.New("start host: no scratch directory")
	}
	if cfg.ScratchDir, err = filepath.Abs(cfg.ScratchDir); err != nil {
		return nil, fmt.Errorf("start host: scratch directory: %w", err)
	}
	if err := os.MkdirAll(cfg.ScratchDir, 0o700); err != nil {
		return nil, fmt.Errorf("start host: scratch directory: %w", err)
	}
	if cfg.Executable == "" {
		if cfg.Executable, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("start host: find the warden executable for workers: %w", err)
		}
	}
	if cfg.ConfigPath != "" {
		if cfg.ConfigPath, err = filepath.Abs(cfg.ConfigPath); err != nil {
			return nil, fmt.Errorf("start host: config path: %w", err)
		}
	}
	h := &host{cfg: cfg, id: newID(""), out: cfg.Stdout, socket: filepath.Join(state, localapi.SocketName)}
	h.ops = h.newOps()
	h.log = cfg.Logger.With("component", "host", "host_id", h.id)
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()

	// The socket first: if another host serves this state directory,
	// stop before touching its store.
	if h.sockLn, err = localapi.Listen(h.socket); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	undo = append(undo, func() { h.sockLn.Close() })

	// The config before the store: it names the audit anchor's sinks.
	paths := cfg.Paths
	paths.Protected = append(append([]string(nil), paths.Protected...), state)
	if cfg.ConfigPath != "" {
		paths.Protected = append(paths.Protected, cfg.ConfigPath)
	}
	if h.pol, err = loadPolicy(cfg.ConfigPath, paths, cfg.Logger); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	if h.db, err = h.openStore(ctx); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	undo = append(undo, func() { h.db.Close() })
	alive := alive
	if h.pg != nil {
		// Join before anything names this host: its lease is what the
		// other hosts go by.
		if h.member, err = cluster.Join(ctx, cluster.Options{
			Store: h.pg, ID: h.id, Addr: cfg.Addr, Lease: h.pol.start.Cluster.Lease,
			FailureLimit: h.pol.start.Kanban.FailureLimit, Follow: h.pg.Follow, Logger: cfg.Logger,
			Reaped: func(r cluster.Reap) { h.ops.Reaped(len(r.Hosts), r.Requests, r.CronRuns, r.TaskRuns) },
			Fence:  h.fenceDead,
		}); err != nil {
			return nil, fmt.Errorf("start host: join the hosts sharing the store: %w", err)
		}
		undo = append(undo, func() { _ = h.member.Leave(context.WithoutCancel(ctx)) })
		alive = h.member.Alive
	}
	h.st = h.db
	if cfg.wrap != nil {
		h.st = cfg.wrap(h.db)
	}

	// The sandbox, then the fence: whatever a crashed host left running
	// is killed, and its death confirmed, before any run is retried or
	// abandoned (the scheduler and the dispatcher start in serve).
	startCfg := h.pol.start
	if h.sandbox, err = NewSandbox(ctx, SandboxFacts{
		StateDir: state, ConfigPath: cfg.ConfigPath, Paths: paths, Environ: cfg.Environ, Config: startCfg,
		Spawner: h.id, Recorder: h.db, Probe: cfg.sandboxProbe, Logger: cfg.Logger,
	}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.db.SetSandboxLabel(sandbox.Label(h.sandbox)) // the records the store writes itself (a question's ask and end)
	if st := h.sandbox.Status(); st.Refusing {
		h.log.Error("sandbox unavailable: every command will be refused", "why", st.Why, "fix", st.Fix)
	} else if st.Mode == sandbox.Off {
		h.log.Warn("sandbox.mode is off: commands run unconfined")
	}
	fenced, err := sandbox.Fence(ctx, h.db)
	for _, p := range fenced {
		h.log.Warn("fenced a leftover of an earlier host", "pid", p.PID, "what", p.What, "owner", p.Owner, "run", p.Run, "spawner", p.Spawner)
	}
	h.fenced = len(fenced)
	if err != nil {
		return nil, fmt.Errorf("start host: %w (a process an earlier host started is still alive; nothing is retried until it is gone)", err)
	}

	if h.oldToken, err = removeOldToken(filepath.Join(state, OldTokenName)); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.creds = &credential.Service{Store: h.db}
	h.boards = board.New(board.Options{Store: h.db})
	if n, err := h.creds.Purge(ctx); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	} else if n > 0 {
		h.log.InfoContext(ctx, "forgot expired credentials", "count", n)
	}

	h.broker = broker.New(broker.Options{
		Requests: h.st, Grants: h.st, Host: h.id, Alive: alive,
		Timeout: h.pol.current().Timeout, Logger: cfg.Logger,
	})
	if h.member != nil {
		h.member.SetBroker(h.broker)
	}
	recovered, err := h.broker.Recover(ctx)
	if err != nil {
		return nil, fmt.Errorf("start host: withdraw an earlier run's requests: %w", err)
	}
	wd, _ := os.Getwd()
	if h.consoleDir, err = consoleWorkspace(wd, cfg.ScratchDir, paths.Home); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	if h.agents, err = newAgents(agentDeps{cfg: startCfg, environ: cfg.Environ, convs: h.db, logger: cfg.Logger, sandbox: h.sandbox, dir: h.consoleDir}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	undo = append(undo, h.agents.close)
	if h.gate, err = gate.New(gate.Options{
		Policy: h.pol.current(), Grants: h.st, Sessions: h.st, ProcessYolo: cfg.Yolo, Guardian: h.agents.guardian,
	}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.pol.onChange = h.gate.SetPolicy
	term := tools.Terminal{Env: execenv.Build(cfg.Environ, startCfg.Tools.EnvPassthrough, nil), Sandbox: h.sandbox}
	if h.shell, err = shellstate.New(shellstate.Options{
		Dir: filepath.Join(state, ShellStateDir), Terminal: term, Logger: cfg.Logger,
	}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.runner = runner.New(runner.Options{
		Gate: h.gate, Broker: h.broker, Audit: h.st, Logger: cfg.Logger,
		Terminal: term, Sessions: shellSessions{h.shell},
	})
	h.agents.bind(h.runner)
	if err := h.newCron(ctx); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.groups = &ancestry.Groups{}
	var remoteLn net.Listener
	if rc := startCfg.Kanban.Remote; rc.Enabled {
		if remoteLn, h.remoteFP, err = listenRemote(state, rc); err != nil {
			return nil, fmt.Errorf("start host: %w", err)
		}
		undo = append(undo, func() { remoteLn.Close() })
		h.remoteAddr = remoteLn.Addr().String()
	}
	if h.dispatch, err = dispatch.New(dispatch.Options{
		RemoteListener: remoteLn, RemoteLease: startCfg.Kanban.Remote.Lease, Network: startCfg.Sandbox.Network,
		RemoteOnly: startCfg.Kanban.Remote.Only && startCfg.Kanban.Remote.Enabled,
		Board:      h.db, Boards: h.boards, Runner: h.runner, Sandbox: h.sandbox, Cron: cronRunner{h.cron}, Executable: cfg.Executable,
		StateDir: state, ScratchDir: cfg.ScratchDir, Environ: cfg.Environ, Groups: h.groups, Logger: cfg.Logger,
		Passthrough: startCfg.Tools.EnvPassthrough, FailureLimit: startCfg.Kanban.FailureLimit, Concurrency: startCfg.Kanban.Concurrency,
		Ended: h.dropShell, Model: h.agents.workerModel(), MaxTurns: startCfg.LLM.MaxTurns, Attend: h.kanbanChannel,
		// The model is the host's: its key never reaches a worker, even
		// when tools.env_passthrough names it.
		Withhold: nonEmpty(startCfg.LLM.APIKeyEnv),
		Holder:   h.id, Lease: h.claimLease(), Alive: alive,
	}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	if h.webLn, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("start host: web console: %w", err)
	}
	undo = append(undo, func() { h.webLn.Close() })
	consoleURL := "http://" + h.webLn.Addr().String() + "/"
	h.webLn = connlimit.New(h.webLn, connlimit.Options{Limits: cfg.Limits, Key: connlimit.RemoteIP, Refuse: connlimit.RefuseHTTP, Logger: cfg.Logger})
	h.surface = hostsurface.New(hostsurface.Parts{Broker: h.broker, Requests: h.st, Sessions: h.st, Runner: h.runner, Agent: h.agents.agent,
		Dir: h.consoleDir, Console: consoleURL, Logger: cfg.Logger})
	if h.console, err = web.New(web.Options{
		Host: h.surface, Store: h.st, Credentials: h.creds, Hosts: cfg.ConsoleHosts, Logger: cfg.Logger,
		Cron: hostsurface.NewCron(h.cron, h.db), Board: hostsurface.NewBoard(h.boards),
		ShellReset: func(_ context.Context, key string) error { return h.shell.Reset(key) },
		Alerts:     h.alerts,
	}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	undo = append(undo, func() { h.console.Close() })
	h.api = localapi.New(localapi.Options{
		Broker: h.broker, Store: h.st, Runner: h.runner, Channel: h.console,
		Cron: h.cron, CronStore: h.db,
		Board: h.db, Boards: h.boards, Dispatch: h.dispatch, Remote: h.issueRemote,
		ShellReset: func(_ context.Context, key string) error { return h.shell.Reset(key) },
		Console:    func(id string) string { return consoleURL + "pending#req-" + id },
		ConsoleURL: consoleURL, Credentials: h.creds,
		Peers: localapi.PeerPolicy{UID: os.Getuid(),
			Boundary: ancestry.Boundary{Host: os.Getpid(), Groups: h.groups}},
		Status: h.status,
		Logger: cfg.Logger, Limits: cfg.Limits,
	})
	h.sockLn = h.api.Limit(h.sockLn)
	if h.chats, err = newChats(chatDeps{cfg: startCfg.Chat, environ: cfg.Environ, passthrough: startCfg.Tools.EnvPassthrough,
		home: cfg.Paths.Home, host: h.surface, posts: h.db, logger: cfg.Logger}); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	h.pol.onConfig = func(c *config.Config) { h.chats.reload(c.Chat) }
	h.info = Info{ID: h.id, ConsoleURL: consoleURL, Socket: h.socket}
	h.banner(recovered)
	return h, nil
}

// AnchorSinks are the audit anchor's sinks the audit: section names,
// besides the sidecar the store always keeps.
func AnchorSinks(a config.Audit) []anchor.Sink {
	var out []anchor.Sink
	if a.AnchorFile != "" {
		out = append(out, anchor.File{Path: a.AnchorFile})
	}
	if a.AnchorSyslog {
		out = append(out, &anchor.Syslog{})
	}
	if a.AnchorURL != "" {
		out = append(out, anchor.HTTP{URL: a.AnchorURL})
	}
	return out
}

// newCron creates the cron scheduler on the host's store and runner,
// with the scratch directory's cron/ workspace as the steps' directory.
func (h *host) newCron(ctx context.Context) error {
	h.cronDir = filepath.Join(h.cfg.ScratchDir, CronDir)
	if err := os.MkdirAll(h.cronDir, 0o700); err != nil {
		return fmt.Errorf("cron workspace: %w", err)
	}
	jobs, err := h.db.ListCronJobs(ctx)
	if err != nil {
		return fmt.Errorf("cron: %w", err)
	}
	h.cronJobs = len(jobs)
	h.cron, err = cron.New(cron.Options{Store: cronMetrics{h.db, h.ops}, Runner: h.runner, Host: h.id, Logger: h.cfg.Logger, Dir: h.cronDir,
		Ended: h.dropShell, Agent: h.agents.cronAgent(), Shared: h.pg != nil,
		Workers: h.pol.start.Cron.Workers, RunTimeout: h.pol.start.Cron.RunTimeout})
	if err != nil {
		return fmt.Errorf("cron: %w", err)
	}
	return nil
}

// serve runs the servers until ctx ends, then shuts down in order.
func (h *host) serve(ctx context.Context) error {
	serveCtx, stopServe := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopServe(nil)
	// Both servers cut slow and idle clients loose and cap connections
	// per client and in all (connlimit): the console per remote IP, the
	// admin socket per peer uid. The console's event stream and the
	// socket's streams lift their own deadlines.
	webSrv := &http.Server{
		Handler:     h.ops.Wrap(h.console),
		BaseContext: func(net.Listener) context.Context { return serveCtx },
		ErrorLog:    slog.NewLogLogger(h.cfg.Logger.With("component", "web").Handler(), slog.LevelWarn),
	}
	h.cfg.Limits.Apply(webSrv)
	apiSrv := h.api.HTTPServer(serveCtx)

	var wg sync.WaitGroup
	errc := make(chan error, 3)
	for _, s := range []struct {
		srv *http.Server
		ln  net.Listener
	}{{webSrv, h.webLn}, {apiSrv, h.sockLn}} {
		wg.Go(func() {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		})
	}
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() { h.pol.run(watchCtx) })
	wg.Go(func() { h.watchStore(watchCtx) })
	if h.member != nil {
		wg.Go(func() {
			if err := h.member.Run(watchCtx); err != nil {
				errc <- err
			}
		})
	}
	// The scheduler carries none of ctx's values: each run's context
	// holds its own owner only.
	cronCtx, stopCron := context.WithCancelCause(context.Background())
	defer stopCron(nil)
	wg.Go(func() {
		if err := h.cron.Run(cronCtx); err != nil {
			h.log.ErrorContext(cronCtx, "cron scheduler", "err", err)
		}
	})
	// The dispatcher, like the scheduler, carries none of ctx's values;
	// its workers are killed when it stops, before the store closes.
	dispatchCtx, stopDispatch := context.WithCancelCause(context.Background())
	defer stopDispatch(nil)
	wg.Go(func() {
		if err := h.dispatch.Run(dispatchCtx); err != nil {
			h.log.ErrorContext(dispatchCtx, "kanban dispatcher", "err", err)
		}
	})

	// The chat surfaces, like the scheduler, carry none of ctx's values.
	h.chats.run(context.Background())

	h.log.InfoContext(ctx, "serving", "console", h.info.ConsoleURL, "socket", h.socket)
	if h.cfg.Ready != nil {
		h.cfg.Ready(h.info)
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
		h.log.ErrorContext(ctx, "server failed; shutting down", "err", runErr)
	}

	// Stop accepting: Shutdown closes the listeners at once and then
	// waits for handlers, which the steps below end.
	const cause = "host shutting down"
	down := context.WithoutCancel(ctx)
	graceCtx, cancelGrace := context.WithTimeout(down, shutdownGrace)
	defer cancelGrace()
	var sd sync.WaitGroup
	for _, srv := range []*http.Server{webSrv, apiSrv} {
		sd.Go(func() {
			if err := srv.Shutdown(graceCtx); err != nil {
				srv.Close()
			}
		})
	}
	h.broker.Close(down, cause)               // pending requests withdrawn; their waiters deny
	h.chats.settle(graceCtx)                  // their chat messages say so; the chat surfaces stop
	stopServe(errors.New(cause))              // running commands killed
	stopCron(errors.New(cause))               // cron runs killed and recorded failed (Run returns once they are)
	stopDispatch(errors.New(cause))           // workers' process groups killed, their runs recorded failed
	if err := h.console.Close(); err != nil { // console streams and runs end
		h.log.WarnContext(down, "close console", "err", err)
	}
	sd.Wait()
	h.api.Wait() // streams the admin socket handed over to their own goroutines (ended by stopServe)
	stopWatch()
	wg.Wait()        // the scheduler and the dispatcher have returned: nothing writes the store any more
	h.agents.close() // MCP servers' sessions end (their stdio servers exit)
	if h.member != nil {
		// The other hosts need not wait for the lease to expire: this
		// host's requests were withdrawn and its runs ended above.
		if err := h.member.Leave(down); err != nil {
			h.log.WarnContext(down, "leave the hosts sharing the store", "err", err)
		}
	}
	if err := h.db.Close(); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("close store: %w", err))
	}
	if err := os.Remove(h.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		runErr = errors.Join(runErr, fmt.Errorf("remove socket: %w", err))
	}
	h.log.InfoContext(down, "stopped")
	fmt.Fprintln(h.out, "warden: host stopped")
	return runErr
}

// storeCheckEvery is how often the host looks at its database file.
const storeCheckEvery = time.Second

// watchStore notices the database file deleted or replaced even while
// nothing writes (a write notices at once): the store then refuses all
// work, and the status and the console say why.
func (h *host) watchStore(ctx context.Context) {
	t := time.NewTicker(storeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			var err error
			switch db := h.db.(type) {
			case *sqlite.DB:
				err = db.CheckFile()
			case *postgres.DB:
				// A reachable server clears a connection fault.
				err = db.Ping(ctx)
			}
			if _, fault := h.db.Fault(); err != nil || fault != nil {
				h.ops.StoreError()
			}
		}
	}
}

// status is the host's health: GET /v1/status.
func (h *host) status(context.Context) localapi.Status {
	st := localapi.Status{Host: h.id}
	st.Config.Path, st.Config.Digest = h.cfg.ConfigPath, h.pol.digest()
	if p := h.pol.problem(); p != nil {
		st.Config.Rejected, st.Config.Since = p.Err.Error(), p.Since
	}
	st.Store.OK = true
	if since, err := h.db.Fault(); err != nil {
		st.Store.OK, st.Store.Fault, st.Store.Since = false, err.Error(), since
	}
	st.Store.AuditSeq = h.db.Head().Seq
	return st
}

// alerts are the console's banners: what the operator must act on.
func (h *host) alerts() []string {
	var out []string
	if p := h.pol.problem(); p != nil {
		kept := "the last good config"
		if p.Kept == "" || p.Kept == "defaults" {
			kept = "the safe defaults"
		}
		out = append(out, fmt.Sprintf("Config not reloaded since %s; %s stays in force: %v", p.Since.Local().Format(time.DateTime), kept, p.Err))
	}
	if since, err := h.db.Fault(); err != nil {
		out = append(out, fmt.Sprintf("The store refuses all work since %s: %v", since.Local().Format(time.DateTime), err))
	}
	return append(out, consoleWarnings(h.sandbox.Status())...)
}

// banner prints the startup lines.
func (h *host) banner(recovered int) {
	w := h.out
	fmt.Fprintf(w, "warden: host %s started\n", h.id)
	fmt.Fprintf(w, "  state:   %s\n", h.cfg.StateDir)
	fmt.Fprintf(w, "  store:   %s\n", h.describeStore())
	fmt.Fprintf(w, "  config:  %s\n", h.pol.describe())
	fmt.Fprintf(w, "  console: %s\n", h.info.ConsoleURL)
	fmt.Fprintln(w, "  login:   run `warden console` for a one-time login link; scripts: `warden token create --scope read`")
	if h.oldToken {
		fmt.Fprintln(w, "  note:    removed the admin token file an older warden left in the state directory: it no longer logs in")
	}
	fmt.Fprintf(w, "  socket:  %s (warden approvals, grants, exec, audit, cron, kanban)\n", h.socket)
	fmt.Fprintf(w, "  cron:    %s; steps run in %s\n", plural(h.cronJobs, "job"), h.cronDir)
	if h.consoleDir != "" {
		fmt.Fprintf(w, "  console: sessions' commands run in %s (the host's working directory cannot be a workspace)\n", h.consoleDir)
	}
	fmt.Fprintf(w, "  kanban:  workers (%s worker) talk to %s; scratch workspaces in %s\n", h.cfg.Executable, h.dispatch.Socket(), h.cfg.ScratchDir)
	if h.remoteAddr != "" {
		fmt.Fprintf(w, "  workers: remote workers connect to %s over TLS, pinning sha256 %s (`warden kanban remote TASK` issues a task)\n", h.remoteAddr, h.remoteFP)
		if !loopback(h.remoteAddr) {
			fmt.Fprintf(w, "  note:    the worker listener %s is reachable beyond this machine (kanban.remote.listen); only issued tokens get in\n", h.remoteAddr)
		}
	}
	if line := kanbanAskLine(h.gate.Policy().KanbanMode, h.gate.Policy().Timeout, h.info.ConsoleURL); line != "" {
		fmt.Fprintf(w, "  kanban:  %s\n", line)
	}
	fmt.Fprintf(w, "  agents:  %s\n", h.agents.describe)
	if line, warn := sandboxLines(h.sandbox.Status()); warn {
		fmt.Fprintf(w, "  warning: sandbox %s\n", line)
	} else {
		fmt.Fprintf(w, "  sandbox: %s\n", line)
	}
	if h.fenced > 0 {
		fmt.Fprintf(w, "  fenced:  killed %s an earlier host left running, before any retry\n", plural(h.fenced, "process"))
	}
	for _, l := range h.chats.lines {
		fmt.Fprintf(w, "  chat:    %s\n", l)
	}
	if recovered > 0 {
		fmt.Fprintf(w, "  recovered: withdrew %d request(s) left pending by an earlier run (host restarted)\n", recovered)
	}
	if !loopback(h.cfg.Addr) {
		fmt.Fprintf(w, "  warning: the console listens on %s, beyond this machine; put TLS (a reverse proxy) in front of it\n", h.cfg.Addr)
	}
	if h.cfg.Yolo {
		fmt.Fprintln(w, "  warning: --yolo: attended sessions' dangerous commands run without asking (hardline and deny rules still block)")
	}
}

// plural is "1 job", "2 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkAddr refuses a console address beyond loopback unless allowed.
func checkAddr(addr string, allowRemote bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("console address %q: %w", addr, err)
	}
	if !loopback(addr) && !allowRemote {
		return fmt.Errorf("console address %s: %w: the console would be reachable from other machines; use a loopback address, or pass --allow-remote and put TLS (a reverse proxy) in front", addr, ErrRemote)
	}
	return nil
}

// loopback reports whether addr's host is a loopback name or address.
// An empty host (":7878") listens everywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// cronRunner lets kanban workers start cron runs (workerapi cron_run):
// the scheduler's RunNow and Wait, with the run's status as a string.
type cronRunner struct{ s *cron.Scheduler }

// RunNow starts a run of job name whose owner has parent in its lineage.
func (c cronRunner) RunNow(ctx context.Context, name string, parent owner.Owner) (string, error) {
	return c.s.RunNow(ctx, name, parent)
}

// Wait blocks until the run ends and returns its status.
func (c cronRunner) Wait(ctx context.Context, id string) (string, error) {
	r, err := c.s.Wait(ctx, id)
	return string(r.Status), err
}

// shellSessions gives the runner the sessions' shell state.
type shellSessions struct{ m *shellstate.Manager }

// Begin starts a call of session key.
func (s shellSessions) Begin(ctx context.Context, key string) runner.SessionCall {
	return s.m.Begin(ctx, key)
}

// dropShell drops an ended session's shell state; a failure is logged.
func (h *host) dropShell(ctx context.Context, session string) {
	if err := h.shell.Reset(session); err != nil {
		h.log.WarnContext(ctx, "drop shell state", "session", session, "err", err)
	}
}

// removeOldToken deletes the console admin token file an older warden
// kept in the state directory. It no longer authenticates anything
// (the console takes login links and hashed API tokens only), and a
// secret left on disk would only mislead. It reports whether there was
// one.
func removeOldToken(path string) (bool, error) {
	err := os.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("remove the old admin token file: %w", err)
}
