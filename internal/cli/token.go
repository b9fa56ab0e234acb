package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// tokenOptions are the flags of warden token and its verbs.
type tokenOptions struct {
	state  string
	json   bool
	name   string
	scopes []string
	ttl    time.Duration
}

// newTokenCmd builds "warden token".
func newTokenCmd() *cobra.Command {
	cmd := parentCmd("token", "Create, list and revoke API tokens for scripts",
		"missing subcommand (warden token create --scope SCOPE | list | revoke ID)")
	cmd.AddCommand(newTokenCreateCmd(), newListCmd(tokenList), newTokenRevokeCmd())
	return cmd
}

func newTokenCreateCmd() *cobra.Command {
	var opts tokenOptions
	cmd := &cobra.Command{
		Use:   "create --scope read|approve|admin [--name NAME] [--ttl 720h] [--json] [--state DIR]",
		Short: "Create an API token (shown once)",
		Long: `Create an API token for a script that talks to the web console's HTTP API
("Authorization: Bearer TOKEN"). The token is printed once: the host keeps
only its hash. Give the least scope the script needs:

  read     see pending requests, sessions, grants, the audit log, cron,
           the board and the event stream
  approve  read, and answer pending requests once, for the session, or
           deny (and MCP servers' questions); not "always"
  admin    everything the console can do: always-grants, yolo, revoking
           grants, running commands in a session, cron runs, comments

A token expires after --ttl (default 720h = 30 days, at most 8784h) and
can be revoked at once with warden token revoke ID. It is created over the
admin socket, so only this user outside every tool sandbox can make one.

--json prints {"id", "kind", "name", "scopes", "by", "created_at",
"expires_at", "token"}.

` + hostExitHelp,
		Example: `  warden token create --scope read --name dashboard
  warden token create --scope approve --ttl 24h --json`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTokenCreate(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	f := cmd.Flags()
	f.StringSliceVar(&opts.scopes, "scope", nil, "scope: read, approve or admin (required; repeatable or comma-separated)")
	f.StringVar(&opts.name, "name", "", "a label for the token (at most 64 bytes)")
	f.DurationVar(&opts.ttl, "ttl", credential.DefaultTokenTTL, "lifetime")
	f.BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runTokenCreate(ctx context.Context, opts tokenOptions, stdout io.Writer) error {
	scopes, err := credential.ParseScopes(opts.scopes)
	if err != nil {
		return usageError{fmt.Errorf("--scope: %w", err)}
	}
	if opts.ttl <= 0 || opts.ttl > credential.MaxTokenTTL {
		return usageError{fmt.Errorf("--ttl %v: want more than 0 and at most %v", opts.ttl, credential.MaxTokenTTL)}
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := c.CreateToken(ctx, localapi.TokenRequest{Name: opts.name, Scopes: names, TTLSeconds: int64(opts.ttl / time.Second)})
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, t, true)
	}
	_, err = fmt.Fprintf(stdout, "%s\n  id:      %s\n  scopes:  %s\n  expires: %s\n  (shown only this once: warden keeps only its hash)\n",
		t.Token, t.ID, strings.Join(t.Scopes, ","), t.Expires.Local().Format(time.DateTime))
	return err
}

// tokenList is "warden token list".
var tokenList = listSpec[store.Credential]{
	use:   "list",
	short: "List API tokens",
	long: `List the API tokens, oldest first: id, name, scopes, state (live, expired,
revoked), expiry, and who created them. Never the tokens themselves: the
host does not have them.

--json prints an array of {"id", "kind", "name", "scopes", "by",
"created_at", "expires_at", "revoked_at"}.`,
	fetch: (*localapi.Client).Tokens,
	list: termui.List[store.Credential]{
		Empty: "no tokens",
		Columns: []termui.Column[store.Credential]{
			{Name: "ID", Cell: func(t store.Credential) string { return t.ID }},
			{Name: "NAME", Cell: func(t store.Credential) string { return orDash(t.Name) }},
			{Name: "SCOPES", Cell: func(t store.Credential) string { return strings.Join(t.Scopes, ",") }},
			{Name: "STATE", Cell: func(t store.Credential) string { return credentialState(t, time.Now()) }},
			{Name: "EXPIRES", Cell: func(t store.Credential) string { return t.Expires.Local().Format(time.DateTime) }},
			{Name: "CREATED BY", Cell: func(t store.Credential) string { return t.By }},
		},
		Filters: credentialFilters,
	},
}

func newTokenRevokeCmd() *cobra.Command {
	var opts tokenOptions
	cmd := &cobra.Command{
		Use:   "revoke ID [--json] [--state DIR]",
		Short: "Revoke an API token",
		Long: `Revoke an API token by its id (from warden token list): its next request is
refused.

--json prints {"revoked": 1}.

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTokenRevoke(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runTokenRevoke(ctx context.Context, opts tokenOptions, id string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.RevokeToken(ctx, id); err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, map[string]int{"revoked": 1}, true)
	}
	_, err = fmt.Fprintf(stdout, "revoked token %s\n", sanitize(id))
	return err
}
