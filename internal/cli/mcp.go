package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/mcpserve"
)

// mcpOptions are the flags of warden mcp.
type mcpOptions struct {
	log    logOptions // --log-format, --log-level
	state  string
	config string
}

const mcpLong = `Serve warden's tools to another agent over MCP on stdio: shell {command,
cwd?}, execute_code {language, source} and write_file {path, content}.
Each call runs on the running host (warden serve on --state) after its
gate decided, as the attended owner external:CLIENT/SESSION, where CLIENT
is the MCP client's name and SESSION is new for every warden mcp process:
a dangerous call waits for a human on the web console (or warden
approvals), up to approvals.timeout; silence is a deny. The result
carries the output and exit status, or why the call did not run; its
structured part says status ran, denied, invalid (arguments refused
before anyone was asked: an unknown language, a missing field) or error
(unknown whether it ran), and has an exit_code only when it ran.

A client that sends a progress token gets notifications/progress every
5 seconds while a call waits for a human (with the request and the time
left) and while it runs: a client that resets its request timeout on
progress waits as long as the human may take. (Clients that do not keep
their own default timeout, often 60 s: raise it above approvals.timeout.)
The tools carry titles and annotations (none is read-only; write_file
stays in its directory), and execute_code's language is an enum of the
interpreters the host runs.

Commands and code run in the directory warden mcp was started in (shell
takes an absolute cwd); write_file writes inside it only.

In an MCP client's configuration:

  {"mcpServers":{"warden":{"command":"warden","args":["mcp"]}}}

With mcp.ask_client: true in the config (--config, default
$XDG_CONFIG_HOME/warden/config.yaml; a missing file means it is off),
a client that supports MCP elicitation (form mode) is asked too, so its
own UI can show the question to its user: "Run it" (yes or no) and a
reason if not. The console keeps the question; the first answer wins,
and a late answer from the other side is ignored. No answer by
approvals.timeout is still a deny, and any failure on the client's side
denies. Clients on MCP protocol 2026-07-28 get the question as an input
request of the tool call; older ones as elicitation/create. Turn it on
only for a client that shows the question to a human: whoever answers
the client's question can approve the agent's dangerous calls.

warden mcp needs a running host and refuses to start without one: its
calls run in the host, with the host's environment allowlist.

Exit status: 0 when the client closes the connection; 2 when warden is
not running or failed; 3 usage error.`

// newMCPCmd builds "warden mcp".
func newMCPCmd() *cobra.Command {
	var opts mcpOptions
	cmd := &cobra.Command{
		Use:                   "mcp [--state DIR] [--config FILE]",
		Short:                 "Serve shell, code and file tools over MCP on stdio, through the host's gate",
		Long:                  mcpLong,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("mcp: working directory: %w", err)
			}
			opts.log = logOptionsOf(cmd)
			return runMCP(cmd.Context(), opts, dir, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&opts.config, "config", "", "config file, read for mcp.ask_client (default $XDG_CONFIG_HOME/warden/config.yaml)")
	return cmd
}

func runMCP(ctx context.Context, opts mcpOptions, dir string, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := opts.log.logger(stderr, slog.LevelWarn)
	askClient, err := mcpAskClient(opts.config, logger)
	if err != nil {
		return err
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	// Refuse to start without a host: every call would fail, and the
	// client would only learn it one tool call at a time.
	if _, err := c.Approvals(ctx); err != nil {
		return hostError(err)
	}
	s, err := mcpserve.New(mcpserve.Options{
		Runner: c, Dir: dir, Version: version(),
		Session:   "mcp-" + strings.ToLower(ulid.Make().String()),
		Logger:    logger,
		AskClient: askClient, Answerer: c,
	})
	if err != nil {
		return err
	}
	err = s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// mcpAskClient reads mcp.ask_client from the config file at path (the
// default path when empty). A missing file means the defaults (off); a
// broken one is an error, as it is for warden serve.
func mcpAskClient(path string, logger *slog.Logger) (bool, error) {
	if path == "" {
		var err error
		if path, err = defaultConfigPath(); err != nil {
			return false, err
		}
	}
	cfg, warnings, err := config.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("mcp: %w (check it with `warden config check %s`)", err, path)
	}
	for _, w := range warnings {
		logger.Warn("config warning", "component", "config", "warning", w.String())
	}
	return cfg.MCP.AskClient, nil
}

// nopWriteCloser leaves closing stdout to the process.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
