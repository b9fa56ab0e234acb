package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// sessionsOptions are the sessions commands' flags.
type sessionsOptions struct {
	state string
	json  bool
}

func newSessionsCmd() *cobra.Command {
	cmd := parentCmd("sessions", "List sessions and reset their terminal state",
		"missing subcommand (warden sessions list | reset KEY)")
	cmd.AddCommand(newListCmd(sessionsList), newSessionsResetCmd())
	return cmd
}

// sessionsList is "warden sessions list".
var sessionsList = listSpec[store.SessionRow]{
	use:   "list",
	short: "List sessions",
	long: `List the sessions the host has seen, oldest first: key, owner, whether the
session's yolo switch is on, when it started and when it ended ("-" while
live).

--json prints an array of {"key", "owner": {"kind", …}, "owner_text",
"yolo", "created_at", "ended_at"}.`,
	fetch: (*localapi.Client).Sessions,
	list: termui.List[store.SessionRow]{
		Empty: "no sessions",
		Columns: []termui.Column[store.SessionRow]{
			{Name: "KEY", Cell: func(s store.SessionRow) string { return s.Key }},
			{Name: "OWNER", Cell: func(s store.SessionRow) string { return s.OwnerText }},
			{Name: "YOLO", Cell: func(s store.SessionRow) string { return yesNo(s.Yolo) }},
			{Name: "STARTED", Cell: func(s store.SessionRow) string { return s.Created.Local().Format(time.DateTime) }},
			{Name: "ENDED", Cell: func(s store.SessionRow) string {
				if s.Ended.IsZero() {
					return "-"
				}
				return s.Ended.Local().Format(time.DateTime)
			}},
		},
		Filters: []termui.Filter[store.SessionRow]{
			{Flag: "ended", Usage: "only the ended sessions, or only the live ones", Choices: []string{"yes", "no"},
				Value: func(s store.SessionRow) string { return yesNo(!s.Ended.IsZero()) }},
			{Flag: "yolo", Usage: "only the sessions whose yolo switch is on, or off", Choices: []string{"yes", "no"},
				Value: func(s store.SessionRow) string { return yesNo(s.Yolo) }},
		},
	},
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
