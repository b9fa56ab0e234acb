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

// tokenOptions are the flags of warden token create.
type tokenOptions struct {
	name   string
	scopes []string
	ttl    time.Duration
}

// newTokenCmd builds "warden token".
func newTokenCmd() *cobra.Command {
	return parentCmd("token", "Create, list and revoke API tokens for scripts",
		"missing subcommand (warden token create --scope SCOPE | list | revoke ID)",
		newTokenCreateCmd(), newListCmd(tokenList), newTokenRevokeCmd())
}

func newTokenCreateCmd() *cobra.Command {
	var (
		opts tokenOptions
		req  localapi.TokenRequest
	)
	cmd := newHostVerbCmd(hostVerb[localapi.NewToken]{
		use:   "create --scope read|approve|admin [--name NAME] [--ttl 720h] [--json] [--state DIR]",
		short: "Create an API token (shown once)",
		long: `Create an API token for a script that talks to the web console's HTTP API
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
		example: `  warden token create --scope read --name dashboard
  warden token create --scope approve --ttl 24h --json`,
		args:  cobra.NoArgs,
		json:  "print JSON",
		check: func(*cobra.Command, []string) (err error) { req, err = opts.request(); return err },
		ask: func(ctx context.Context, c *localapi.Client, _ []string) (localapi.NewToken, error) {
			return c.CreateToken(ctx, req)
		},
		write: func(w io.Writer, _ []string, t localapi.NewToken) error {
			return writef(w, "%s\n  id:      %s\n  scopes:  %s\n  expires: %s\n  (shown only this once: warden keeps only its hash)\n",
				t.Token, t.ID, strings.Join(t.Scopes, ","), t.Expires.Local().Format(time.DateTime))
		},
	})
	f := cmd.Flags()
	f.StringSliceVar(&opts.scopes, "scope", nil, "scope: read, approve or admin (required; repeatable or comma-separated)")
	f.StringVar(&opts.name, "name", "", "a label for the token (at most 64 bytes)")
	f.DurationVar(&opts.ttl, "ttl", credential.DefaultTokenTTL, "lifetime")
	return cmd
}

// request checks token create's flags and builds the host's request.
func (o tokenOptions) request() (localapi.TokenRequest, error) {
	scopes, err := credential.ParseScopes(o.scopes)
	if err != nil {
		return localapi.TokenRequest{}, usageError{fmt.Errorf("--scope: %w", err)}
	}
	if o.ttl <= 0 || o.ttl > credential.MaxTokenTTL {
		return localapi.TokenRequest{}, usageError{fmt.Errorf("--ttl %v: want more than 0 and at most %v", o.ttl, credential.MaxTokenTTL)}
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return localapi.TokenRequest{Name: o.name, Scopes: names, TTLSeconds: int64(o.ttl / time.Second)}, nil
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
	return newHostVerbCmd(hostVerb[map[string]int]{
		use:   "revoke ID [--json] [--state DIR]",
		short: "Revoke an API token",
		long: `Revoke an API token by its id (from warden token list): its next request is
refused.

--json prints {"revoked": 1}.

` + hostExitHelp,
		json: "print JSON",
		ask: func(ctx context.Context, c *localapi.Client, args []string) (map[string]int, error) {
			return map[string]int{"revoked": 1}, c.RevokeToken(ctx, args[0])
		},
		write: func(w io.Writer, args []string, _ map[string]int) error {
			return writef(w, "revoked token %s\n", sanitize(args[0]))
		},
	})
}
