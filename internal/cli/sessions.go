package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// sessionsOptions are the sessions commands' flags.
type sessionsOptions struct {
	state string
	json  bool
}

func newSessionsCmd() *cobra.Command {
	cmd := parentCmd("sessions", "Manage sessions' terminal state",
		"missing subcommand (warden sessions reset KEY)")
	cmd.AddCommand(newSessionsResetCmd())
	return cmd
}

func newSessionsResetCmd() *cobra.Command {
	var opts sessionsOptions
	cmd := &cobra.Command{
		Use:   "reset KEY [--json] [--state DIR]",
		Short: "Clear a session's shell state",
		Long: `Clear the shell state of session KEY on the running host: its working
directory, exported variables, functions and aliases. Its next command starts
in a fresh shell. A session without state is no error.

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionsReset(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"reset": KEY} as JSON`)
	return cmd
}

func runSessionsReset(ctx context.Context, opts sessionsOptions, key string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.ResetSession(ctx, key); err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, map[string]string{"reset": key}, true)
	}
	_, err = fmt.Fprintf(stdout, "reset the shell state of session %s\n", sanitize(key))
	return err
}
