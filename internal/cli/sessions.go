package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

func newSessionsCmd() *cobra.Command {
	return parentCmd("sessions", "List sessions and reset their terminal state",
		"missing subcommand (warden sessions list | reset KEY)",
		newListCmd(sessionsList), newSessionsResetCmd())
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
			yesNoFilter("ended", "only the ended sessions, or only the live ones", func(s store.SessionRow) bool { return !s.Ended.IsZero() }),
			yesNoFilter("yolo", "only the sessions whose yolo switch is on, or off", func(s store.SessionRow) bool { return s.Yolo }),
		},
	},
}

func newSessionsResetCmd() *cobra.Command {
	return newHostVerbCmd(hostVerb[map[string]string]{
		use:   "reset KEY [--json] [--state DIR]",
		short: "Clear a session's shell state",
		long: `Clear the shell state of session KEY on the running host: its working
directory, exported variables, functions and aliases. Its next command starts
in a fresh shell. A session without state is no error.

` + hostExitHelp,
		json: `print {"reset": KEY} as JSON`,
		ask: func(ctx context.Context, c *localapi.Client, args []string) (map[string]string, error) {
			return map[string]string{"reset": args[0]}, c.ResetSession(ctx, args[0])
		},
		write: func(w io.Writer, args []string, _ map[string]string) error {
			return writef(w, "reset the shell state of session %s\n", sanitize(args[0]))
		},
	})
}
