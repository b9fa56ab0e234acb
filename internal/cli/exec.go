package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// execOptions are the flags of warden exec.
type execOptions struct {
	state   string
	session string
}

const execLong = `Run COMMAND on the running host as the web session KEY (the owner
gateway:web/KEY, created on first use): the gate decides; if it asks, the
question goes to that session's human, on the web console or with warden
approvals, and this waits for the answer, printing where to answer on
stderr. Then the command runs in the current directory, with an environment
built from an allowlist, and its output is printed as it comes.

COMMAND is one shell command line: several arguments are joined with shell
quoting, a single argument is used as written, so these differ:

  warden exec --session s -- ls '|' wc -l    # ls with two arguments
  warden exec --session s -- 'ls | wc -l'    # a pipeline

Interrupting warden exec withdraws a pending question, or stops the
command.

Exit status: the command's own exit status when it ran; 126 when it did
not run (denied by the gate or a human — the message, with the human's
reason, is on stderr — or the question expired or was withdrawn, or it
could not be started); 2 when warden is not running or failed, or the
command was killed by a signal; 3 usage error; 130 interrupted.`

// newExecCmd builds "warden exec".
func newExecCmd() *cobra.Command {
	var opts execOptions
	cmd := &cobra.Command{
		Use:   "exec --session KEY [--state DIR] -- COMMAND...",
		Short: "Run a command through the host's gate as a web session",
		Long:  execLong,
		Example: `  warden exec --session demo -- ls -la
  warden exec --session demo -- 'rm -rf build && make'`,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd.Context(), opts, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().SetInterspersed(false) // everything after COMMAND's first word is COMMAND's
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&opts.session, "session", "", "the web session key to run as (required)")
	return cmd
}

func runExec(ctx context.Context, opts execOptions, args []string, stdout, stderr io.Writer) error {
	if opts.session == "" {
		return usageError{errors.New("--session KEY is required")}
	}
	if len(args) == 0 {
		return usageError{errors.New("missing COMMAND (warden exec --session KEY -- COMMAND...)")}
	}
	line, err := joinCommand(args)
	if err != nil {
		return usageError{err}
	}
	if strings.TrimSpace(line) == "" {
		return usageError{errors.New("empty COMMAND")}
	}
	dir, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("exec: working directory: %w", err)
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	var end localapi.Event
	err = c.Exec(ctx, localapi.ExecRequest{Session: opts.session, Command: line, Dir: dir}, func(e localapi.Event) error {
		switch e.Event {
		case localapi.EventPending:
			where := e.Console
			if where == "" {
				where = "the web console"
			}
			fmt.Fprintf(stderr, "warden: waiting for approval of request %s on %s (or: warden approvals approve %s)\n", e.ID, where, e.ID)
		case localapi.EventStdout, localapi.EventStderr:
			b, err := e.Bytes()
			if err != nil {
				return fmt.Errorf("exec: bad output event: %w", err)
			}
			w := stdout
			if e.Event == localapi.EventStderr {
				w = stderr
			}
			if _, err := w.Write(b); err != nil {
				return fmt.Errorf("exec: write output: %w", err)
			}
		default:
			end = e
		}
		return nil
	})
	if err != nil {
		return hostError(err)
	}
	switch end.Event {
	case localapi.EventExit:
		if end.Code == nil {
			return errors.New("exec: the host sent an exit event without a code")
		}
		switch code := *end.Code; {
		case code == 0:
			return nil
		case code < 0:
			fmt.Fprintln(stderr, "warden: the command was killed")
			return exitStatus(ExitBlocked)
		default:
			return exitStatus(code)
		}
	case localapi.EventDenied:
		fmt.Fprintf(stderr, "warden: %s\n", sanitize(end.Message))
		return exitStatus(ExitNotRun)
	case localapi.EventError:
		fmt.Fprintf(stderr, "warden: the command could not be run: %s\n", sanitize(end.Message))
		return exitStatus(ExitNotRun)
	}
	return fmt.Errorf("exec: unexpected event %q", end.Event)
}
