package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/localapi"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// newGrantsCmd builds "warden grants".
func newGrantsCmd() *cobra.Command {
	return parentCmd("grants", "List and revoke recorded approvals (session and always grants)",
		"missing subcommand (warden grants list | revoke ID)",
		newListCmd(grantsList), newGrantsRevokeCmd())
}

// grantsList is "warden grants list".
var grantsList = listSpec[grant.Grant]{
	use:   "list",
	short: "List grants",
	long: `List the grants humans recorded by approving for a session or always, oldest
first. The config file's command_allowlist is not listed: change it in the
file.

--json prints an array of {"id", "scope" (session or permanent), "session",
"grain" (exact, prefix or class), "pattern", "by", "surface", "created",
"expires"} (see docs/host.md).`,
	fetch: (*localapi.Client).Grants,
	list: termui.List[grant.Grant]{
		Empty: "no grants",
		Columns: []termui.Column[grant.Grant]{
			{Name: "ID", Cell: func(g grant.Grant) string { return g.ID }},
			{Name: "SCOPE", Cell: func(g grant.Grant) string { return string(g.Scope) }},
			{Name: "SESSION", Cell: func(g grant.Grant) string { return orDash(g.Session) }},
			{Name: "GRAIN", Cell: func(g grant.Grant) string { return string(g.Grain) }},
			{Name: "PATTERN", Cell: grant.Grant.String},
			{Name: "BY", Cell: func(g grant.Grant) string { return orDash(g.By) }},
			{Name: "CREATED", Cell: func(g grant.Grant) string { return g.Created.Local().Format(time.DateTime) }},
			{Name: "EXPIRES", Cell: func(g grant.Grant) string {
				if g.Expires.IsZero() {
					return "-"
				}
				return g.Expires.Local().Format(time.DateTime)
			}},
		},
		Filters: []termui.Filter[grant.Grant]{
			{Flag: "scope", Usage: "only the grants of this scope", Choices: []string{string(grant.Session), string(grant.Permanent)},
				Value: func(g grant.Grant) string { return string(g.Scope) }},
			{Flag: "session", Usage: "only the grants of this session", Value: func(g grant.Grant) string { return g.Session }},
		},
	},
}

func newGrantsRevokeCmd() *cobra.Command {
	return newHostVerbCmd(hostVerb[map[string]string]{
		use:   "revoke ID [--json] [--state DIR]",
		short: "Revoke a grant",
		long: `Revoke a grant by its id (from warden grants list). The next matching action
is decided afresh.

` + hostExitHelp,
		json: `print {"revoked": ID} as JSON`,
		ask: func(ctx context.Context, c *localapi.Client, args []string) (map[string]string, error) {
			return map[string]string{"revoked": args[0]}, c.Revoke(ctx, args[0])
		},
		write: func(w io.Writer, args []string, _ map[string]string) error {
			return writef(w, "revoked %s\n", sanitize(args[0]))
		},
	})
}
