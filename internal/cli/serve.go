package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/host"
)

// serveOptions are the flags of warden serve.
type serveOptions struct {
	log         logOptions // --log-format, --log-level
	state       string
	scratch     string
	config      string
	addr        string
	allowRemote bool
	hosts       []string
	yolo        bool
	store       string
}

const serveLong = `Run the warden host: the store, the gate, the broker that holds questions
for humans, the cron scheduler, the web console where questions are
answered, and the admin socket that warden approvals, grants, exec, audit
and cron talk to.

The state directory (--state) holds the SQLite store (warden.db), the admin
token (token, mode 0600; created and printed once on first start), the
admin socket (warden.sock, mode 0600, for this user and root only), the
kanban worker socket (worker.sock) and the workers' logs (logs/).

The scratch directory (--scratch, default $XDG_CACHE_HOME/warden/scratch,
else ~/.cache/warden/scratch) holds the workspaces: the cron steps'
working directory (cron/) and one directory per scratch kanban task. It
must not contain the state directory or lie inside it.

Every process the host starts for an agent (terminal and code tools,
!cmd, cron and kanban steps, kanban workers, stdio MCP servers) runs in
the sandbox (sandbox: in the config; docs/sandbox.md): its own user, mount
and PID namespaces, where the state directory and the config do not exist,
only its workspace and a private /tmp are writable, and everything it
started dies with it. Each is recorded before it runs; at start the host
kills what a crashed predecessor left running before any run is retried.
When the kernel cannot sandbox, every command is refused (warden doctor
says why) unless the config says sandbox: {mode: off}.

The kanban dispatcher runs each ready task in "warden worker --task ID", a
subprocess in its own sandbox with a clean environment and a one-time token
on file descriptor 3; every step it runs is decided by the gate as the
run's kanban owner (approvals.kanban_mode for dangerous ones). The admin
socket refuses any process descended from the host: a tool run, a worker,
or anything they start.

The config file (--config, default $XDG_CONFIG_HOME/warden/config.yaml, else
~/.config/warden/config.yaml) is reloaded when it changes; an edit that
leaves it broken, empty (or whitespace only) or deleted keeps the last good
policy, is logged at WARN and shown on the console. A reload that removes a
deny rule or loosens a mode is logged at WARN with what changed. Without a
file the host runs with safe defaults (approvals.mode manual, every
unattended mode deny) and picks the file up when it appears. A file that
is broken or empty at start is an error (write {} for the defaults).

With --store postgres://… (or store: in the config) the store is a
PostgreSQL database shared by several hosts behind a load balancer: an
answer given on any host's console wakes the waiter on the host that
asked, a cron slot fires on one host, a kanban task is claimed by one
dispatcher, and the audit log stays one chain. Each host keeps its own
state directory (sockets, shell state, logs, its anchor) and holds a
lease in the database (cluster.lease, default 15s): a host stopped or
cut off for longer is reaped by the others. See docs/multi-host.md.

The audit log's head is kept outside the database too (STATE/warden.db.anchor
and the audit: sinks of the config). A database missing, replaced or short
of records the anchor knows of is refused at start: restore it, or move the
anchor files aside to accept the loss. See docs/operations.md.

The console listens on --addr (default 127.0.0.1:7878). An address beyond
loopback is refused unless --allow-remote is given; then put TLS (a reverse
proxy) in front of it: the console has no TLS of its own. The console
refuses requests whose Host header is not a loopback name or the address it
listens on (DNS rebinding); give the name a reverse proxy serves it as with
--console-host NAME.

--yolo lets attended sessions' dangerous commands run without asking, for
the life of this process; hardline commands and deny rules still block, and
cron, kanban and other unattended runs keep their modes.

SIGINT or SIGTERM shut the host down: pending requests are withdrawn
("host shutting down"), running commands and cron runs are stopped (the
runs recorded failed), the store is closed and the socket removed. Logs go to stderr.

Exit status: 0 after a clean shutdown; 2 if the host cannot start (state
directory, socket in use, broken or empty config, audit records lost) or fails; 3 for a usage error,
including an --addr beyond loopback without --allow-remote.`

// newServeCmd builds "warden serve".
func newServeCmd() *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--state DIR] [--scratch DIR] [--config FILE] [--addr HOST:PORT] [--allow-remote] [--console-host NAME] [--yolo] [--store postgres://…]",
		Short: "Run the warden host: gate, broker, cron, web console and admin socket",
		Long:  serveLong,
		Example: `  warden serve
  warden serve --addr 127.0.0.1:9000 --config ./warden.yaml`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.log = logOptionsOf(cmd)
			return runServe(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	addStateFlag(cmd, &opts.state)
	f.StringVar(&opts.scratch, "scratch", "", "workspace directory (default $XDG_CACHE_HOME/warden/scratch)")
	addConfigFlag(cmd, &opts.config)
	f.StringVar(&opts.addr, "addr", host.DefaultAddr, "web console address HOST:PORT")
	f.BoolVar(&opts.allowRemote, "allow-remote", false, "allow a console address beyond loopback (put TLS in front)")
	f.StringArrayVar(&opts.hosts, "console-host", nil, "a Host name the console accepts besides loopback (the name a reverse proxy serves it as); repeatable")
	f.BoolVar(&opts.yolo, "yolo", false, "run attended sessions' dangerous commands without asking (floors still apply)")
	f.StringVar(&opts.store, "store", "", "a postgres:// URL: keep the store in PostgreSQL, shared with other hosts (default: the config's store:, else SQLite in the state directory)")
	return cmd
}

// runServe is warden serve: it resolves paths at the edge and runs the
// host until ctx is cancelled.
func runServe(ctx context.Context, opts serveOptions, stdout, stderr io.Writer) error {
	state, err := resolveStateDir(opts.state)
	if err != nil {
		return err
	}
	scratch, err := resolveScratchDir(opts.scratch)
	if err != nil {
		return err
	}
	cfgPath, err := resolveConfigPath(opts.config)
	if err != nil {
		return err
	}
	logger := opts.log.logger(stderr, slog.LevelInfo)
	err = host.Run(ctx, host.Config{
		StateDir: state, ScratchDir: scratch, ConfigPath: cfgPath, Addr: opts.addr, AllowRemote: opts.allowRemote, ConsoleHosts: opts.hosts, Yolo: opts.yolo,
		Store:  opts.store,
		Stdout: stdout, Logger: logger,
		Environ: os.Environ(), // the edge: commands get an allowlisted copy (execenv)
		Paths:   hostPaths(cfgPath),
	})
	if errors.Is(err, host.ErrRemote) {
		return usageError{err}
	}
	return err
}
