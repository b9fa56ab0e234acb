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
	cmd.AddCommand(newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd())
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

func newTokenListCmd() *cobra.Command {
	var opts tokenOptions
	cmd := &cobra.Command{
		Use:   "list [--json] [--state DIR]",
		Short: "List API tokens",
		Long: `List the API tokens, oldest first: id, name, scopes, state (live, expired,
revoked), expiry, and who created them. Never the tokens themselves: the
host does not have them.

--json prints an array of {"id", "kind", "name", "scopes", "by",
"created_at", "expires_at", "revoked_at"}.

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTokenList(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runTokenList(ctx context.Context, opts tokenOptions, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	list, err := c.Tokens(ctx)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, list, true)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(stdout, "no tokens")
		return err
	}
	now := time.Now()
	rows := make([][]string, 0, len(list))
	for _, t := range list {
		rows = append(rows, []string{t.ID, orDash(t.Name), strings.Join(t.Scopes, ","), credentialState(t, now), t.Expires.Local().Format(time.DateTime), t.By})
	}
	return table(stdout, []string{"ID", "NAME", "SCOPES", "STATE", "EXPIRES", "CREATED BY"}, rows)
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
