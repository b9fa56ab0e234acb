package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/mcpserve"
)

// mcpOptions are the flags of warden mcp.
type mcpOptions struct {
	state string
}

const mcpLong = `Serve warden's tools to another agent over MCP on stdio: shell {command,
cwd?}, execute_code {language, source} and write_file {path, content}.
Each call runs on the running host (warden serve on --state) after its
gate decided, as the attended owner external:CLIENT/SESSION, where CLIENT
is the MCP client's name and SESSION is new for every warden mcp process:
a dangerous call waits for a human on the web console (or warden
approvals), up to approvals.timeout; silence is a deny. The result
carries the output and exit status, or why the call did not run.

Commands and code run in the directory warden mcp was started in (shell
takes an absolute cwd); write_file writes inside it only.

In an MCP client's configuration:

  {"mcpServers":{"warden":{"command":"warden","args":["mcp"]}}}

warden mcp needs a running host and refuses to start without one: its
calls run in the host, with the host's environment allowlist.

Exit status: 0 when the client closes the connection; 2 when warden is
not running or failed; 3 usage error.`

// newMCPCmd builds "warden mcp".
func newMCPCmd() *cobra.Command {
	var opts mcpOptions
	cmd := &cobra.Command{
		Use:                   "mcp [--state DIR]",
		Short:                 "Serve shell, code and file tools over MCP on stdio, through the host's gate",
		Long:                  mcpLong,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("mcp: working directory: %w", err)
			}
			return runMCP(cmd.Context(), opts, dir, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addStateFlag(cmd, &opts.state)
	return cmd
}

func runMCP(ctx context.Context, opts mcpOptions, dir string, stdin io.Reader, stdout, stderr io.Writer) error {
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
		Session: "mcp-" + strings.ToLower(ulid.Make().String()),
		Logger:  slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
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

// nopWriteCloser leaves closing stdout to the process.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
