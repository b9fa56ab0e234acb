package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// newKanbanRemoteCmd builds "warden kanban remote ID".
func newKanbanRemoteCmd() *cobra.Command {
	var (
		opts      kanbanOptions
		tokenFile string
		ttl       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "remote ID --token-file FILE [--ttl DURATION] [--json] [--state DIR]",
		Short: "Issue a ready task to a worker on another machine",
		Long: `Issue a ready task to a remote worker: the host claims it for a new
run with no local worker and writes a one-time token bound to that task
and run to FILE (mode 0600; it must not exist). Copy the file to the other
machine and run the command this prints there:

  warden worker --connect HOST:PORT --pin SHA256 --token-file FILE --task ID --workspace DIR

The worker runs the steps (or, for a prompt task, the agent loop, whose
model calls this host answers with its own credentials) in its own
sandbox and asks this host to decide each action, as the run's owner. The token is refused after --ttl (default
10m), after one use, or for another task. The host must serve remote
workers (kanban.remote.enabled; docs/workers.md).

` + kanbanExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tokenFile == "" {
				return usageError{errors.New("--token-file is required: the token is written there, never printed")}
			}
			if ttl < 0 {
				return usageError{errors.New("--ttl must be positive")}
			}
			return runKanbanRemote(cmd.Context(), opts, args[0], tokenFile, ttl, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "write the one-time token to this new file (mode 0600)")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the token waits for the worker (default 10m)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the issue (without the token) as JSON")
	return cmd
}

func runKanbanRemote(ctx context.Context, opts kanbanOptions, id, tokenFile string, ttl time.Duration, stdout io.Writer) error {
	// The file first: a token is never issued that could not be kept.
	f, err := os.OpenFile(tokenFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return usageError{fmt.Errorf("token file: %w", err)}
	}
	ok := false
	defer func() {
		f.Close()
		if !ok {
			os.Remove(tokenFile)
		}
	}()
	r, err := callHost(ctx, opts.state, func(c *localapi.Client) (localapi.KanbanRemote, error) { return c.IssueKanbanTask(ctx, id, ttl) })
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, r.Token+"\n"); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	ok = true
	r.Token = ""
	if opts.json {
		return writeJSON(stdout, r, true)
	}
	_, err = fmt.Fprintf(stdout, "issued task %s as run %s; the token in %s works once, until %s\nrun on the worker's machine:\n  warden worker --connect %s --pin %s --token-file FILE --task %s --workspace DIR\n",
		r.Task, r.Run, tokenFile, r.Expires.Local().Format(time.DateTime), r.Addr, r.Fingerprint, r.Task)
	return err
}
