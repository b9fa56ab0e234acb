package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/host"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// auditOptions are the flags of warden audit.
type auditOptions struct {
	state   string
	config  string
	session string
	since   string
	verdict string
	limit   int
}

const auditLong = `Print the audit log of the running host, oldest first: every decision the
gate and the humans made, written before the action ran.

--session K keeps one session's records; --since T those at or after T (an
RFC 3339 time such as 2025-01-31T12:00:00Z, a date 2025-01-31, or a
duration such as 2h meaning that long ago); --verdict V those with verdict
allow, deny or ask (ask is the gate's first record of a question; the
human's answer follows as allow or deny); --limit N the newest N.

--json prints an array of {"seq", "time", "session", "owner", "owner_text",
"kind", "payload" (secrets redacted), "payload_hash" (SHA-256 of the exact
payload), "classes", "verdict", "rule", "request_id", "by", "surface",
"reason", "prev", "hash"} (see docs/host.md).

warden audit verify recomputes the hash chain.

` + hostExitHelp

// newAuditCmd builds "warden audit" and "warden audit verify".
func newAuditCmd() *cobra.Command {
	var (
		opts auditOptions
		q    localapi.AuditQuery
	)
	cmd := newHostVerbCmd(hostVerb[[]store.Decision]{
		use:   "audit [--json] [--session K] [--since T] [--verdict V] [--limit N]",
		short: "Print the audit log of decisions",
		long:  auditLong,
		args:  cobra.NoArgs,
		json:  "print JSON",
		check: func(*cobra.Command, []string) (err error) { q, err = opts.query(time.Now()); return err },
		ask: func(ctx context.Context, c *localapi.Client, _ []string) ([]store.Decision, error) {
			return c.Audit(ctx, q)
		},
		write: printAudit,
	})
	f := cmd.Flags()
	f.StringVar(&opts.session, "session", "", "only this session's records")
	f.StringVar(&opts.since, "since", "", "only records at or after T (RFC 3339 time, date, or duration ago)")
	f.StringVar(&opts.verdict, "verdict", "", "only records with verdict allow, deny or ask")
	f.IntVar(&opts.limit, "limit", 0, "only the newest N records")
	cmd.AddCommand(newAuditVerifyCmd())
	return cmd
}

// parseSince reads --since: an RFC 3339 time, a date, or a duration ago.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time (2025-01-31T12:00:00Z), a date (2025-01-31) or a duration (2h)", s)
}

// query checks audit's filter flags and builds the host's query; now is
// what a --since duration counts back from.
func (o auditOptions) query(now time.Time) (localapi.AuditQuery, error) {
	q := localapi.AuditQuery{Session: o.session, Limit: o.limit}
	if o.since != "" {
		t, err := parseSince(o.since, now)
		if err != nil {
			return q, usageError{err}
		}
		q.Since = t
	}
	switch o.verdict {
	case "", "allow", "deny", "ask":
		q.Verdict = o.verdict
	default:
		return q, usageError{fmt.Errorf("--verdict must be allow, deny or ask, not %q", o.verdict)}
	}
	if o.limit < 0 {
		return q, usageError{fmt.Errorf("--limit must not be negative")}
	}
	return q, nil
}

// printAudit writes the audit records as a table.
func printAudit(stdout io.Writer, _ []string, ds []store.Decision) error {
	if len(ds) == 0 {
		_, err := fmt.Fprintln(stdout, "no audit records")
		return err
	}
	rows := make([][]string, 0, len(ds))
	for _, d := range ds {
		rows = append(rows, []string{strconv.FormatInt(d.Seq, 10), d.Time.Local().Format(time.DateTime), d.Verdict, d.Rule, orDash(d.Session), clip(d.Payload, 50), answer(d)})
	}
	return termui.Table(stdout, []string{"SEQ", "TIME", "VERDICT", "RULE", "SESSION", "ACTION", "ANSWER"}, rows)
}

// answer is a record's human part: who answered, where, and why.
func answer(d store.Decision) string {
	var parts []string
	if d.By != "" {
		parts = append(parts, "by "+d.By)
	}
	if d.Surface != "" {
		parts = append(parts, "on "+d.Surface)
	}
	if d.Reason != "" {
		parts = append(parts, "reason: "+d.Reason)
	}
	return orDash(strings.Join(parts, " "))
}

func newAuditVerifyCmd() *cobra.Command {
	var opts auditOptions
	cmd := &cobra.Command{
		Use:   "verify [--state DIR] [--config FILE]",
		Short: "Verify the audit log's hash chain",
		Long: `Recompute the audit log's hash chain: each record's hash covers the previous
record's hash and the record itself, so an edited, inserted or removed
record breaks it. Records cut from the end, and a database deleted or
replaced, are found by comparing the log with its anchors: the head (newest
seq and hash) kept in STATE/warden.db.anchor after each commit, and in
audit.anchor_file of the config; "N newest record(s) missing" says how many.

With the host running it verifies; otherwise the database is read directly
(read-only, never created), with audit.anchor_file read from --config
(default $XDG_CONFIG_HOME/warden/config.yaml).

Exit status: 0 the chain verifies; 2 it is broken (the first bad seq is
named), records are missing, or there is no database; 3 usage error.`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAuditVerify(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&opts.config, "config", "", "config file, read for audit.anchor_file when no host runs (default $XDG_CONFIG_HOME/warden/config.yaml)")
	return cmd
}

func runAuditVerify(ctx context.Context, opts auditOptions, stdout, stderr io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Verify(ctx)
	if _, ok := errors.AsType[*localapi.NotRunningError](err); ok {
		if res, err = verifyOffline(ctx, opts, stderr); err != nil {
			return err
		}
	} else if err != nil {
		return hostError(err)
	}
	switch {
	case res.OK:
	case res.Gone, res.Replaced, res.Missing > 0:
		fmt.Fprintf(stderr, "warden: audit log incomplete (%d record(s) verify): %s\n", res.Records, sanitize(res.Error))
		return exitStatus(ExitBlocked)
	default:
		fmt.Fprintf(stderr, "warden: audit chain broken at seq %d (%d record(s) before it verify): %s\n", res.BadSeq, res.Records, sanitize(res.Error))
		return exitStatus(ExitBlocked)
	}
	_, err = fmt.Fprintf(stdout, "audit chain ok: %d record(s)\n", res.Records)
	return err
}

// verifyOffline verifies the store in the state directory without a
// host, against its sidecar anchor and the config's audit.anchor_file.
func verifyOffline(ctx context.Context, opts auditOptions, stderr io.Writer) (localapi.VerifyResult, error) {
	state, err := resolveStateDir(opts.state)
	if err != nil {
		return localapi.VerifyResult{}, err
	}
	var extra []anchor.Source
	cfgPath := opts.config
	if cfgPath == "" {
		cfgPath, _ = defaultConfigPath()
	}
	if cfgPath != "" {
		cfg, _, err := config.Load(cfgPath)
		switch {
		case errors.Is(err, fs.ErrNotExist) && opts.config == "":
		case err != nil:
			fmt.Fprintf(stderr, "warden: config %s not read (%v); checking the sidecar anchor only\n", cfgPath, err)
		case cfg.Audit.AnchorFile != "":
			extra = append(extra, anchor.File{Path: cfg.Audit.AnchorFile})
		}
	}
	n, err := sqlite.Verify(ctx, filepath.Join(state, host.DBName), extra...)
	res := localapi.VerifyResult{OK: err == nil, Records: n}
	if loss, ok := errors.AsType[*store.LossError](err); ok {
		res.Error, res.Missing, res.Gone, res.Replaced = err.Error(), loss.Missing, loss.Gone, loss.Replaced
		return res, nil
	}
	switch {
	case errors.Is(err, store.ErrChainBroken):
		res.Error, res.BadSeq = err.Error(), int64(n)+1
	case errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("warden is not running, and there is no audit log at %s (nor an anchor that knows of one)", filepath.Join(state, host.DBName))
	case err != nil:
		return res, err
	}
	return res, nil
}
