package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/localapi"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// grantsOptions are the flags of warden grants and its verbs.
type grantsOptions struct {
	state string
	json  bool
}

// newGrantsCmd builds "warden grants".
func newGrantsCmd() *cobra.Command {
	cmd := parentCmd("grants", "List and revoke recorded approvals (session and always grants)",
		"missing subcommand (warden grants list | revoke ID)")
	cmd.AddCommand(newListCmd(grantsList), newGrantsRevokeCmd())
	return cmd
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
	var opts grantsOptions
	cmd := &cobra.Command{
		Use:   "revoke ID [--json] [--state DIR]",
		Short: "Revoke a grant",
		Long: `Revoke a grant by its id (from warden grants list). The next matching action
is decided afresh.

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGrantsRevoke(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"revoked": ID} as JSON`)
	return cmd
}

func runGrantsRevoke(ctx context.Context, opts grantsOptions, id string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Revoke(ctx, id); err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, map[string]string{"revoked": id}, true)
	}
	_, err = fmt.Fprintf(stdout, "revoked %s\n", sanitize(id))
	return err
}
