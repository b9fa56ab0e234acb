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

// approvalsOptions are the flags of warden approvals approve (the
// others' are the host verb's).
type approvalsOptions struct {
	scope   string
	grain   string
	pattern string
	content string
}

// newApprovalsCmd builds "warden approvals".
func newApprovalsCmd() *cobra.Command {
	return parentCmd("approvals", "List and answer pending approval requests on the running host",
		"missing subcommand (warden approvals list | approve ID | deny ID)",
		newListCmd(approvalsList), newApprovalsApproveCmd(), newApprovalsDenyCmd())
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
	cmd := newHostVerbCmd(hostVerb[localapi.Result]{
		use:   "approve ID [--scope once|session|always] [--grain exact|prefix|class] [--pattern P]",
		short: "Approve a pending request",
		long:  approvalsApproveLong,
		json:  "print the ended request as JSON",
		check: func(*cobra.Command, []string) error { return opts.validateApprove() },
		ask: func(ctx context.Context, c *localapi.Client, args []string) (localapi.Result, error) {
			return c.Approve(ctx, args[0], opts.approveRequest())
		},
		write: printApproved,
	})
	f := cmd.Flags()
	f.StringVar(&opts.scope, "scope", "once", "once, session or always")
	f.StringVar(&opts.grain, "grain", "", "exact, prefix or class (session and always; default exact)")
	f.StringVar(&opts.pattern, "pattern", "", "the argv prefix for --grain prefix, e.g. 'git push'")
	f.StringVar(&opts.content, "content", "", "an MCP server's question: the answer's fields as a JSON object")
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

// approveRequest is the request of approve's flags: --content answers an
// MCP question, with no scope.
func (o approvalsOptions) approveRequest() localapi.ApproveRequest {
	req := localapi.ApproveRequest{Scope: o.scope, Grain: o.grain, Pattern: o.pattern}
	if o.content != "" {
		req.Scope, req.Content = "", json.RawMessage(o.content)
	}
	return req
}

// printApproved says what an approval covers.
func printApproved(w io.Writer, _ []string, res localapi.Result) error {
	what := "once"
	switch res.Scope {
	case store.Session:
		what = "for session " + res.Session + " (" + string(res.Grain) + ")"
	case store.Always:
		what = "always (" + string(res.Grain) + ")"
	}
	return writef(w, "approved %s %s by %s\n", res.ID, what, sanitize(res.By))
}

func newApprovalsDenyCmd() *cobra.Command {
	var reason string
	cmd := newHostVerbCmd(hostVerb[localapi.Result]{
		use:   "deny ID [--reason TEXT]",
		short: "Deny a pending request",
		long: `Deny a pending request. --reason is shown to the agent (and on warden exec's
stderr) with the denial.

A request that already ended is refused as for approve (exit 2).

` + hostExitHelp,
		json: "print the ended request as JSON",
		ask: func(ctx context.Context, c *localapi.Client, args []string) (localapi.Result, error) {
			return c.Deny(ctx, args[0], localapi.DenyRequest{Reason: reason})
		},
		write: func(w io.Writer, _ []string, res localapi.Result) error {
			return writef(w, "denied %s by %s\n", res.ID, sanitize(res.By))
		},
	})
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the agent")
	return cmd
}
