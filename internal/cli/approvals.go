package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// approvalsOptions are the flags of warden approvals and its verbs.
type approvalsOptions struct {
	state   string
	json    bool
	scope   string
	grain   string
	pattern string
	reason  string
	content string
}

// newApprovalsCmd builds "warden approvals".
func newApprovalsCmd() *cobra.Command {
	cmd := parentCmd("approvals", "List and answer pending approval requests on the running host",
		"missing subcommand (warden approvals list | approve ID | deny ID)")
	cmd.AddCommand(newListCmd(approvalsList), newApprovalsApproveCmd(), newApprovalsDenyCmd())
	return cmd
}

// approvalsList is "warden approvals list".
var approvalsList = listSpec[localapi.Approval]{
	use:   "list",
	short: "List pending approval requests",
	long: `List the requests waiting for a human on the running host, oldest first,
across every session: id, session, owner, classes, time left and the
command.

--json prints an array of {"id", "session", "owner": {"kind", …},
"owner_text", "action": {"kind", "command", …}, "classes": […], "rule",
"created_at", "deadline", "prefix", "notice", "elicit": {"server",
"message", "schema", "url"}} (see docs/host.md). An "elicit" entry is an MCP
server's question to the session's human: answer it with approve
--content '{"field": value}' (accept) or deny (decline).`,
	fetch: (*localapi.Client).Approvals,
	list: termui.List[localapi.Approval]{
		Empty: "no pending approvals",
		Columns: []termui.Column[localapi.Approval]{
			{Name: "ID", Cell: func(a localapi.Approval) string { return a.ID }},
			{Name: "SESSION", Cell: func(a localapi.Approval) string { return a.Session }},
			{Name: "OWNER", Cell: func(a localapi.Approval) string { return a.OwnerText }},
			{Name: "CLASSES", Cell: func(a localapi.Approval) string { return orDash(strings.Join(a.Classes, ",")) }},
			{Name: "LEFT", Cell: func(a localapi.Approval) string { return until(time.Now(), a.Deadline) }},
			{Name: "WHAT", Cell: func(a localapi.Approval) string {
				what := a.Action.Payload()
				if a.Elicit != nil {
					what = "MCP " + a.Elicit.Server + " asks: " + a.Elicit.Message
				}
				return clip(sanitize(what), 60)
			}},
		},
		Filters: []termui.Filter[localapi.Approval]{
			{Flag: "session", Usage: "only the requests of this session", Value: func(a localapi.Approval) string { return a.Session }},
		},
	},
}

const approvalsApproveLong = `Approve a pending request. The waiting action runs as soon as the answer is
recorded.

--scope once (default) covers this one action; session covers it for the
rest of the request's session; always records a permanent grant. For session
and always, --grain chooses what is covered: exact (default) this command
line; prefix an argv prefix (--pattern 'git push', default proposed from
the command, see "prefix" in approvals list --json); class every finding of
the request's classes.

--content JSON answers an MCP server's question (approvals list shows
"MCP … asks:"): the form's fields as a JSON object, e.g.
--content '{"confirm": true}'. Such a question is answered once and grants
nothing.

An answer to a request that already ended is refused and says how it
ended ("nothing pending — it had expired", "… it was already answered",
"… it was withdrawn (host restarted)"); nothing is approved and the exit
status is 2.

` + hostExitHelp

func newApprovalsApproveCmd() *cobra.Command {
	var opts approvalsOptions
	cmd := &cobra.Command{
		Use:                   "approve ID [--scope once|session|always] [--grain exact|prefix|class] [--pattern P]",
		Short:                 "Approve a pending request",
		Long:                  approvalsApproveLong,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprovalsApprove(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	f := cmd.Flags()
	f.StringVar(&opts.scope, "scope", "once", "once, session or always")
	f.StringVar(&opts.grain, "grain", "", "exact, prefix or class (session and always; default exact)")
	f.StringVar(&opts.pattern, "pattern", "", "the argv prefix for --grain prefix, e.g. 'git push'")
	f.StringVar(&opts.content, "content", "", "an MCP server's question: the answer's fields as a JSON object")
	f.BoolVar(&opts.json, "json", false, "print the ended request as JSON")
	return cmd
}

func (o approvalsOptions) validateApprove() error {
	switch o.scope {
	case "once", "session", "always":
	default:
		return usageError{fmt.Errorf("--scope must be once, session or always, not %q", o.scope)}
	}
	switch o.grain {
	case "", "exact", "prefix", "class":
	default:
		return usageError{fmt.Errorf("--grain must be exact, prefix or class, not %q", o.grain)}
	}
	if o.scope == "once" && o.grain != "" && o.grain != "exact" {
		return usageError{fmt.Errorf("--grain %s needs --scope session or always: once covers this action only", o.grain)}
	}
	if o.pattern != "" && o.grain != "prefix" {
		return usageError{fmt.Errorf("--pattern needs --grain prefix")}
	}
	if o.content != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(o.content), &obj); err != nil || obj == nil {
			return usageError{fmt.Errorf("--content must be a JSON object, like '{\"confirm\": true}'")}
		}
		if o.scope != "once" || o.grain != "" {
			return usageError{fmt.Errorf("--content answers an MCP question once; drop --scope and --grain")}
		}
	}
	return nil
}

func runApprovalsApprove(ctx context.Context, opts approvalsOptions, id string, stdout io.Writer) error {
	if err := opts.validateApprove(); err != nil {
		return err
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	req := localapi.ApproveRequest{Scope: opts.scope, Grain: opts.grain, Pattern: opts.pattern}
	if opts.content != "" {
		req.Scope, req.Content = "", json.RawMessage(opts.content)
	}
	res, err := c.Approve(ctx, id, req)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, res, true)
	}
	what := "once"
	switch res.Scope {
	case store.Session:
		what = "for session " + res.Session + " (" + string(res.Grain) + ")"
	case store.Always:
		what = "always (" + string(res.Grain) + ")"
	}
	_, err = fmt.Fprintf(stdout, "approved %s %s by %s\n", res.ID, what, sanitize(res.By))
	return err
}

func newApprovalsDenyCmd() *cobra.Command {
	var opts approvalsOptions
	cmd := &cobra.Command{
		Use:   "deny ID [--reason TEXT]",
		Short: "Deny a pending request",
		Long: `Deny a pending request. --reason is shown to the agent (and on warden exec's
stderr) with the denial.

A request that already ended is refused as for approve (exit 2).

` + hostExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprovalsDeny(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why, for the agent")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the ended request as JSON")
	return cmd
}

func runApprovalsDeny(ctx context.Context, opts approvalsOptions, id string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Deny(ctx, id, localapi.DenyRequest{Reason: opts.reason})
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, res, true)
	}
	_, err = fmt.Fprintf(stdout, "denied %s by %s\n", res.ID, sanitize(res.By))
	return err
}
