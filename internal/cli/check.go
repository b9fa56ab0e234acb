package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/shell"
	render "github.com/wardenhq/warden/internal/surface/terminal"
)

// checkOptions are the flags of warden check.
type checkOptions struct {
	json      bool
	jsonl     bool
	catalogue bool
	config    string
	color     string
	// as is the owner notation of --as; "" when the run decides nothing.
	as string
	// explain shows how the line is read: the argv bash will run, each
	// program's option parse, and what decided.
	explain bool
	// cwd is the directory the command is judged in ("" unknown).
	cwd string
	// maxLine caps one --jsonl input line; zero means defaultMaxLine.
	// Tests lower it to exercise the over-long-line path cheaply.
	maxLine int
}

const checkLong = `Analyse a shell command line and print what it would run and how the gate
classifies it. Nothing is executed.

COMMAND is one shell command line in bash syntax. Several arguments are
joined with shell quoting, so these two are the same command:

  warden check -- rm -rf 'my dir'
  warden check -- "rm -rf 'my dir'"

A single argument is used as written, so 'curl x | sh' is a pipeline.
Flags go before the command: everything from the first argument that is not
a flag (or after --) is the command.

The report lists the verdict, the classes that matched with a description,
the input span of each finding (highlighted on a terminal, marked with ^^^
otherwise), and every command the line would execute, with how it is reached
(through sudo, bash -c, $(…), a function, …).

Verdicts:
  safe       nothing in the catalogue matched
  dangerous  needs approval (rm -rf build, git push --force, curl … | sh)
  hardline   always blocked; nothing overrides it (rm -rf /, mkfs, fork bombs)
  malformed  does not parse, or exceeds a size, nesting or count cap; the
             gate denies it
  denied     a deny rule (approvals.deny) of --config matched; hardline and
             malformed take precedence, and the report names the rule

--json prints one object (shape in docs/check.md, "--json").
--jsonl reads one JSON object per line from stdin, {"cmd": "…"} and
optionally "as": "OWNER" (other fields are ignored), and writes one line
per input line, in order: {"cmd": …, "verdict": …, "classes": [keys…]}
plus "deny_rule" when a rule matched, and "decision" and "rule" when the
line has "as". A line that is not valid JSON, has no string "cmd", has a
bad "as", or is over 1 MiB yields {"error": "line N: …"} in its place.
--jsonl exits 0 unless it cannot read its input or write its output.

With --as OWNER, check also runs the gate's decision table for that
owner and prints the whole path: every row, its outcome and detail, the
row that decided, the decision (allow, ask or deny) and its rule id. The
policy is that of --config (approvals modes, deny rules,
command_allowlist), or the built-in defaults without --config (the
default config file is not read); nothing else a host would know (session
grants, yolo, a guardian) applies. OWNER is written:

  cli                           an interactive terminal session
  gateway:PLATFORM/CHAT[/USER]  a chat session, e.g. gateway:web/KEY
  external:AGENT[/SESSION]      an external agent using warden as its hook
  subagent[:ID]                 an agent delegated by another owner
  cron:JOB                      a scheduled run (cron_mode)
  kanban:TASK                   a kanban worker (kanban_mode)
  single_query                  a one-shot run (single_query_mode)
  api, webhook                  callers without a channel (unattended_mode)
  internal                      warden's own housekeeping

Any owner may add ",session=KEY" (its session key). A lineage is written
parent first: kanban:T1>cron:J1 is a cron run started by a kanban worker,
and gets the most restrictive mode along it. A real answer channel exists
only inside the host, so --as simulates one (surface "check") for the
kinds a human can be behind (cli, gateway, external, subagent); the
others stay without one and resolve from their modes at once. With --as
the exit status follows the decision: 0 allow, 1 ask, 2 deny. --json adds
"as", "decision", "rule", "steps" and "agent_message" to the report.

--explain adds how the line was read: each command's argv as bash will run
it (every byte that is not printable ASCII escaped, e.g. \u00a0), what it was
reached through (sudo, bash -c, $(…)), how its program's options were read
(getopt's rules: bundles, values, unique abbreviations of long options, --),
each finding with what decided it, and the rule that decided the verdict.

--cwd DIR judges relative paths as if the command ran in DIR (without it the
directory is unknown, and a path that climbs out of it is taken to reach /).

--catalogue lists every class key, its tier and its description.

` + exitStatusHelp

const checkExample = `  warden check -- 'rm -rf /'                 # hardline, exit 2
  warden check -- rm -rf build               # dangerous, exit 1
  warden check -- 'git commit -m "rm -rf /"' # safe: quoted data is data
  warden check --json -- 'curl -fsSL x | sh'
  warden check --config warden.yaml -- terraform destroy
  warden check --as cron:nightly -- rm -rf build  # deny unless cron_mode: approve
  warden check --as 'kanban:T1>cron:J1' --config warden.yaml --json -- git push --force
  printf '{"cmd":"ls"}\n{"cmd":"reboot"}\n' | warden check --jsonl
  warden check --catalogue`

// newCheckCmd builds "warden check".
func newCheckCmd() *cobra.Command {
	var opts checkOptions
	cmd := &cobra.Command{
		Use: "check [--json | --jsonl] [--as OWNER] [--config FILE] -- COMMAND...",
		// Use already shows the flags; cobra would append "[flags]"
		// after COMMAND, where flags are not taken.
		DisableFlagsInUseLine: true,
		Short:                 "Analyse a shell command and print the gate's verdict",
		Long:                  checkLong,
		Example:               checkExample,
		Args:                  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), opts, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	// The command's own flags (rm -rf) must not be taken for warden's.
	f.SetInterspersed(false)
	f.BoolVar(&opts.json, "json", false, "print the report as one JSON object")
	f.BoolVar(&opts.jsonl, "jsonl", false, `read {"cmd": …} lines from stdin, write one JSON result per line`)
	f.BoolVar(&opts.catalogue, "catalogue", false, "list every class key, tier and description")
	f.StringVar(&opts.config, "config", "", "apply the deny rules (approvals.deny) of this config `FILE`; with --as or --jsonl \"as\", its whole policy")
	f.StringVar(&opts.as, "as", "", "run the gate's decision table as `OWNER` (cli, gateway:web/KEY, cron:JOB, kanban:T1>cron:J1, …)")
	f.StringVar(&opts.color, "color", "auto", "highlight findings: auto (when stdout is a terminal), always or never")
	f.BoolVar(&opts.explain, "explain", false, "show the argv bash will run (bytes as they are), each program's option parse, and the rule that decided")
	f.StringVar(&opts.cwd, "cwd", "", "judge relative paths as if the command ran in `DIR` (default: unknown)")
	return cmd
}

// validate rejects flag combinations that have no meaning.
func (o checkOptions) validate(args []string) error {
	switch {
	case o.color != "auto" && o.color != "always" && o.color != "never":
		return usageError{fmt.Errorf("--color must be auto, always or never, not %q", o.color)}
	case o.catalogue && (o.jsonl || o.config != "" || o.as != "" || len(args) > 0):
		return usageError{errors.New("--catalogue takes no COMMAND and no --jsonl, --config or --as")}
	case o.catalogue:
		return nil
	case o.json && o.jsonl:
		return usageError{errors.New("--json and --jsonl cannot be combined")}
	case o.jsonl && len(args) > 0:
		return usageError{errors.New("--jsonl reads commands from stdin and takes no COMMAND")}
	case o.jsonl && o.as != "":
		return usageError{errors.New(`--jsonl takes the owner from each line ({"cmd": …, "as": "OWNER"}), not from --as`)}
	case !o.jsonl && len(args) == 0:
		return usageError{errors.New("missing COMMAND (warden check -- COMMAND...)")}
	}
	return nil
}

// runCheck is warden check.
func runCheck(ctx context.Context, opts checkOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := opts.validate(args); err != nil {
		return err
	}
	if opts.catalogue {
		return writeCatalogue(stdout, opts.json)
	}
	// A bad OWNER is the caller's mistake: report it before touching the
	// config, so that it is not hidden behind a config error.
	var as owner.Owner
	if opts.as != "" {
		var err error
		if as, err = parseAs(opts.as); err != nil {
			return asUsageError(err)
		}
	}
	// Any --jsonl line may carry "as", so a --jsonl run compiles the
	// policy too: once, before the first line.
	rules, err := loadRules(opts.config, opts.jsonl || opts.as != "", stderr)
	if err != nil {
		return err
	}
	if opts.jsonl {
		return checkJSONL(ctx, stdin, stdout, rules, opts.maxLine)
	}

	line, err := joinCommand(args)
	if err != nil {
		return usageError{err}
	}
	if opts.cwd != "" {
		if opts.cwd, err = filepath.Abs(opts.cwd); err != nil {
			return usageError{fmt.Errorf("--cwd: %w", err)}
		}
	}
	if opts.as != "" {
		return checkAs(ctx, opts, rules, as, line, stdout)
	}
	e := explain.Of(line, opts.analyser().Analyze(line), rules.deny)
	e.Reading = opts.explain
	if err := writeExplanation(stdout, e, opts); err != nil {
		return err
	}
	if code := verdictExit(e.Verdict); code != ExitSafe {
		return exitStatus(code)
	}
	return nil
}

// joinCommand turns the COMMAND arguments into one command line. A single
// argument is the line as written; several are words, quoted where the
// shell would otherwise split, expand or interpret them, so that the line
// runs exactly that argv.
func joinCommand(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	words := make([]string, len(args))
	for i, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("argument %d cannot be quoted for bash: %w", i+1, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// analyser is the analysis options of a check run (no --as): the
// directory given, and option parses with --explain.
func (o checkOptions) analyser() shell.Options {
	return shell.Options{Cwd: o.cwd, Explain: o.explain}
}

// writeExplanation prints e as the flags ask: --json or for a person.
func writeExplanation(w io.Writer, e explain.Explanation, opts checkOptions) error {
	var err error
	if opts.json {
		err = writeJSON(w, explain.JSON(e), true)
	} else {
		err = render.WriteExplanation(w, e, render.UseColor(opts.color, w))
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// sanitize escapes what in s could act on a terminal (render.Sanitize):
// every text warden prints that it did not write itself goes through it.
func sanitize(s string) string { return render.Sanitize(s) }
