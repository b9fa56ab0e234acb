package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// consoleOptions are the flags of warden console and its verbs.
type consoleOptions struct {
	state string
	json  bool
	open  bool
	ttl   time.Duration
}

const consoleLong = `Print a one-time login link for the web console. The link is asked of the
running host over its admin socket, which admits only this user (or root)
and only a process that runs outside every tool sandbox: an agent's
commands cannot get one. It works once, within --ttl (default 5m, at most
1h); visiting it starts a console session (a cookie, kept hashed by the
host; 12 hours) and sends the browser to the pending requests. A second
visit is refused.

--open also opens it in the default browser (xdg-open, or open on macOS).
--json prints {"id", "url", "path", "expires_at", "by"}.

warden console sessions lists the console sessions; warden console revoke
ID (or --all) logs them out at once.

` + hostExitHelp

// newConsoleCmd builds "warden console".
func newConsoleCmd() *cobra.Command {
	var opts consoleOptions
	cmd := &cobra.Command{
		Use:   "console [--open] [--ttl 5m] [--json] [--state DIR]",
		Short: "Print a one-time login link for the web console (and manage console sessions)",
		Long:  consoleLong,
		Example: `  warden console
  warden console --open
  warden console sessions
  warden console revoke --all`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConsole(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addStateFlag(cmd, &opts.state)
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print JSON")
	f.BoolVar(&opts.open, "open", false, "open the link in the default browser")
	f.DurationVar(&opts.ttl, "ttl", credential.DefaultLoginTTL, "how long the link may wait to be used (at most 1h)")
	cmd.AddCommand(newListCmd(consoleSessions), newConsoleRevokeCmd())
	return cmd
}

func runConsole(ctx context.Context, opts consoleOptions, stdout, stderr io.Writer) error {
	if opts.ttl <= 0 || opts.ttl > credential.MaxLoginTTL {
		return usageError{fmt.Errorf("--ttl %v: want more than 0 and at most %v", opts.ttl, credential.MaxLoginTTL)}
	}
	l, err := callHost(ctx, opts.state, func(c *localapi.Client) (localapi.LoginLink, error) { return c.ConsoleLogin(ctx, opts.ttl) })
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(stdout, l, true)
	} else {
		_, err = fmt.Fprintf(stdout, "%s\n  (works once, until %s; for %s)\n", l.URL, l.Expires.Local().Format(time.DateTime), sanitize(l.By))
	}
	if err != nil || !opts.open {
		return err
	}
	if err := openBrowser(ctx, l.URL); err != nil {
		fmt.Fprintf(stderr, "warden: could not open a browser (%v); open the link above yourself\n", err)
	}
	return nil
}

// openBrowser opens url in the user's browser. It is the operator's own
// command, outside every sandbox, so the opener gets the operator's
// environment (display, session bus), not an agent's allowlist.
func openBrowser(ctx context.Context, url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.CommandContext(ctx, name, url)
	cmd.Env = os.Environ() // the operator's session: the browser needs its display
	return cmd.Run()
}

// consoleSessions is "warden console sessions".
var consoleSessions = listSpec[store.Credential]{
	use:   "sessions",
	short: "List console sessions",
	long: `List the console sessions (logins from one-time links), oldest first, with
the link each came from, whom that link was issued to, where the browser
logged in from, and whether it is live, expired or revoked.

--json prints an array of {"id", "kind", "parent" (the login link), "by",
"remote", "created_at", "expires_at", "revoked_at"}.`,
	fetch: (*localapi.Client).ConsoleSessions,
	list: termui.List[store.Credential]{
		Empty: "no console sessions",
		Columns: []termui.Column[store.Credential]{
			{Name: "ID", Cell: func(s store.Credential) string { return s.ID }},
			{Name: "STATE", Cell: func(s store.Credential) string { return credentialState(s, time.Now()) }},
			{Name: "LOGGED IN", Cell: func(s store.Credential) string { return s.Created.Local().Format(time.DateTime) }},
			{Name: "EXPIRES", Cell: func(s store.Credential) string { return s.Expires.Local().Format(time.DateTime) }},
			{Name: "FROM", Cell: func(s store.Credential) string { return orDash(s.Remote) }},
			{Name: "LINK ISSUED TO", Cell: func(s store.Credential) string { return s.By }},
		},
		Filters: credentialFilters,
	},
}

// credentialFilters filter tokens and console sessions.
var credentialFilters = []termui.Filter[store.Credential]{
	{Flag: "status", Usage: "only the live, expired or revoked ones", Choices: []string{"live", "expired", "revoked"},
		Value: func(c store.Credential) string { return credentialState(c, time.Now()) }},
}

// credentialState is live, expired or revoked.
func credentialState(c store.Credential, now time.Time) string {
	switch {
	case !c.Revoked.IsZero():
		return "revoked"
	case !now.Before(c.Expires):
		return "expired"
	}
	return "live"
}

func newConsoleRevokeCmd() *cobra.Command {
	var all bool
	cmd := newHostVerbCmd(hostVerb[map[string]int]{
		use:   "revoke ID | --all [--json] [--state DIR]",
		short: "Log console sessions out",
		long: `Revoke a console session by its id (from warden console sessions), or every
one with --all: the browser's next request is refused and it must log in
with a new link.

--json prints {"revoked": N}.

` + hostExitHelp,
		args: cobra.MaximumNArgs(1),
		json: "print JSON",
		check: func(_ *cobra.Command, args []string) error {
			if (optionalArg(args) == "") == !all {
				return usageError{errors.New("give a session id or --all, not both")}
			}
			return nil
		},
		ask: func(ctx context.Context, c *localapi.Client, args []string) (map[string]int, error) {
			n, err := c.RevokeConsoleSession(ctx, optionalArg(args))
			return map[string]int{"revoked": n}, err
		},
		write: func(w io.Writer, args []string, res map[string]int) error {
			if id := optionalArg(args); id != "" {
				return writef(w, "revoked console session %s\n", sanitize(id))
			}
			return writef(w, "revoked %s\n", plural(res["revoked"], "console session"))
		},
	})
	cmd.Flags().BoolVar(&all, "all", false, "revoke every console session")
	return cmd
}
