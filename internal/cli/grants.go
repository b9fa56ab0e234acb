package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
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
	cmd.AddCommand(newGrantsListCmd(), newGrantsRevokeCmd())
	return cmd
}

func newGrantsListCmd() *cobra.Command {
	var opts grantsOptions
	cmd := &cobra.Command{
		Use:   "list [--json] [--state DIR]",
		Short: "List grants",
		Long: `List the grants humans recorded by approving for a session or always, oldest
first. The config file's command_allowlist is not listed: change it in the
file.

--json prints an array of {"id", "scope" (session or permanent), "session",
"grain" (exact, prefix or class), "pattern", "by", "surface", "created",
"expires"} (see docs/host.md).

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGrantsList(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runGrantsList(ctx context.Context, opts grantsOptions, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	gs, err := c.Grants(ctx)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, gs, true)
	}
	if len(gs) == 0 {
		_, err := fmt.Fprintln(stdout, "no grants")
		return err
	}
	rows := make([][]string, 0, len(gs))
	for _, g := range gs {
		expires := "-"
		if !g.Expires.IsZero() {
			expires = g.Expires.Local().Format(time.DateTime)
		}
		rows = append(rows, []string{g.ID, string(g.Scope), orDash(g.Session), string(g.Grain), g.String(), orDash(g.By), g.Created.Local().Format(time.DateTime), expires})
	}
	return table(stdout, []string{"ID", "SCOPE", "SESSION", "GRAIN", "PATTERN", "BY", "CREATED", "EXPIRES"}, rows)
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
