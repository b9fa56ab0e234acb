package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// cronOptions are the flags of warden cron and its verbs.
type cronOptions struct {
	state    string
	json     bool
	schedule string
	every    string
	tz       string
	steps    []string
	prompt   string
	overlap  string
	catchUp  string
	wait     bool
}

// cronExitHelp is the exit-status table of warden cron's verbs.
const cronExitHelp = `Exit status:
  0    done (run --wait: the run succeeded)
  1    run: the run failed or was skipped (with --wait, or skipped at once)
  2    warden is not running, the host refused (a job of that name exists,
       a run is in progress), or no such job or run
  3    usage error, including a bad name, schedule or time zone
  130  interrupted (run --wait stops waiting; the run goes on)`

// newCronCmd builds "warden cron".
func newCronCmd() *cobra.Command {
	return parentCmd("cron", "Add, list, remove and run scheduled jobs on the running host",
		"missing subcommand (warden cron add | list | rm | run | history)",
		newCronAddCmd(), newListCmd(cronList), newCronRmCmd(), newCronRunCmd(), newCronHistoryCmd())
}

const cronAddLong = `Add a job to the running host. A script job's steps, shell command lines, run in
order in the scratch directory's cron/ workspace whenever the schedule fires,
each one decided by the gate as the run's own owner (cron:NAME,run=RUN). A
cron run has no human to ask: a dangerous step is decided by
approvals.cron_mode (deny by default), and a denied or failing step ends
the run as failed, with the reason in warden cron history.

A prompt job (--prompt TEXT instead of steps) runs the agent (llm: in the
config file) with TEXT as its message, as the run's cron owner: every tool
call it makes is decided like a step (approvals.cron_mode), a refused call
goes back to the agent as the tool's result, and the run's record holds
the transcript. Without a model configured the run fails and says so.

NAME is 1 to 64 letters, digits, '-', '_' or '.', starting with a letter
or digit.

--schedule SPEC is a cron spec: 5 fields (minute hour day-of-month month
day-of-week), or 6 with seconds first, or @yearly, @monthly, @weekly,
@daily, @hourly, or @every DURATION. --every DUR is the same as
--schedule '@every DUR' (whole seconds, at least 1s). Give one of them.
--tz ZONE is the IANA time zone the schedule is read in (default UTC). On
a DST change a time-of-day slot never runs twice (fall-back) and is never
skipped (spring-forward: it runs at the end of the gap).

The steps: each --step CMD (repeatable, in order), then COMMAND after --.
COMMAND is one shell command line: several arguments are joined with
shell quoting, a single argument is used as written, so these differ:

  warden cron add n --every 1h -- ls '|' wc -l    # ls with two arguments
  warden cron add n --every 1h -- 'ls | wc -l'    # a pipeline

--overlap skip (default) records a run that falls due while another run of
the job is running as skipped; allow runs it beside it. --catch-up once
(default) runs a job once at start for all the slots missed while the host
was down; skip records one skipped run instead.

--json prints the job as stored: {"name", "schedule", "tz", "kind",
"steps", "overlap", "catch_up", "enabled", "next_run_at", …}.

` + cronExitHelp

func newCronAddCmd() *cobra.Command {
	var opts cronOptions
	cmd := newAddCmd(hostVerb[store.CronJob]{
		use:   "add NAME (--schedule SPEC | --every DUR) [--tz ZONE] [--step CMD]... [-- COMMAND...]",
		short: "Add a cron job",
		long:  cronAddLong,
		example: `  warden cron add backup --schedule '0 3 * * *' --tz Europe/Berlin -- 'tar czf /srv/backup.tgz /srv/data'
  warden cron add poll --every 5m -- curl -fsS https://example.com/health
  warden cron add triage --schedule '0 8 * * MON-FRI' --prompt 'Summarise new errors in ./logs'

  warden cron add tidy --schedule @daily --step 'go clean -cache' --step 'df -h'`,
		json: "print the job as JSON",
		write: func(w io.Writer, _ []string, j store.CronJob) error {
			return writef(w, "added cron job %s (%s, %s); next run %s\n", j.Name, j.Schedule, zoneOf(j), nextRun(j))
		},
	}, func(args []string, dash int) (localapi.CronAddRequest, error) {
		return cronAddRequest(opts, args, dash)
	}, (*localapi.Client).AddCronJob)
	f := cmd.Flags()
	f.StringVar(&opts.schedule, "schedule", "", "cron spec, e.g. '0 3 * * *', '*/15 * * * *' or @daily")
	f.StringVar(&opts.every, "every", "", "run every DURATION, e.g. 5m or 1h30m (same as --schedule '@every DUR')")
	f.StringVar(&opts.tz, "tz", "", "IANA time zone the schedule is read in (default UTC)")
	f.StringArrayVar(&opts.steps, "step", nil, "a step's shell command line; repeatable, run in order before COMMAND")
	f.StringVar(&opts.prompt, "prompt", "", "make a prompt job: the agent runs with this message (no steps)")
	f.StringVar(&opts.overlap, "overlap", "", "skip (default) or allow a run while another run of the job is running")
	f.StringVar(&opts.catchUp, "catch-up", "", "once (default) or skip: slots missed while the host was down")
	return cmd
}

// cronAddSyntax words the usage errors of warden cron add's arguments.
var cronAddSyntax = addSyntax{verb: "warden cron add", word: "NAME", tail: " --every DUR -- COMMAND...", shown: "%s"}

// cronAddRequest checks the arguments of warden cron add and builds the
// request: NAME before "--", COMMAND after it. dash is
// cobra's ArgsLenAtDash (-1 without "--").
func cronAddRequest(opts cronOptions, args []string, dash int) (localapi.CronAddRequest, error) {
	name, steps, err := cronAddSyntax.parse(args, dash, opts.prompt, opts.steps)
	if err != nil {
		return localapi.CronAddRequest{}, err
	}
	if err := cron.ValidName(name); err != nil {
		return localapi.CronAddRequest{}, usageError{err}
	}
	req := localapi.CronAddRequest{
		Name: name, Schedule: opts.schedule, Every: opts.every, TZ: opts.tz,
		Steps: steps, Prompt: opts.prompt, Overlap: opts.overlap, CatchUp: opts.catchUp,
	}
	// The host checks all of this too; checking here gives the same
	// message without a host, and a usage error either way.
	j, err := localapi.CronJobOf(req)
	if err != nil {
		return localapi.CronAddRequest{}, usageError{err}
	}
	if _, err := cron.Parse(j.Schedule, j.TZ); err != nil {
		return localapi.CronAddRequest{}, usageError{err}
	}
	return req, nil
}

// zoneOf is the job's time zone for people.
func zoneOf(j store.CronJob) string {
	if j.TZ == "" {
		return "UTC"
	}
	return j.TZ
}

// nextRun renders a job's next run in the local zone, or "never".
func nextRun(j store.CronJob) string {
	if j.NextRun.IsZero() {
		return "never"
	}
	return j.NextRun.Local().Format("2006-01-02 15:04:05 MST")
}

// cronList is "warden cron list".
var cronList = listSpec[store.CronJob]{
	use:   "list",
	short: "List cron jobs",
	long: `List the cron jobs by name: schedule, time zone, next run (local time),
whether enabled, and the steps.

--json prints an array of {"name", "schedule", "tz", "kind", "steps",
"overlap", "catch_up", "enabled", "next_run_at", "next_slot",
"created_at"}.`,
	fetch: (*localapi.Client).CronJobs,
	list: termui.List[store.CronJob]{
		Empty: "no cron jobs",
		Columns: []termui.Column[store.CronJob]{
			{Name: "NAME", Cell: func(j store.CronJob) string { return j.Name }},
			{Name: "SCHEDULE", Cell: func(j store.CronJob) string { return j.Schedule }},
			{Name: "TZ", Cell: zoneOf},
			{Name: "NEXT", Cell: nextRun},
			{Name: "ENABLED", Cell: func(j store.CronJob) string { return yesNo(j.Enabled) }},
			{Name: "STEPS", Cell: func(j store.CronJob) string { return clip(strings.Join(j.Steps, " ; "), 60) }},
		},
		Filters: []termui.Filter[store.CronJob]{
			yesNoFilter("enabled", "only the jobs enabled or not", func(j store.CronJob) bool { return j.Enabled }),
		},
	},
}

func newCronRmCmd() *cobra.Command {
	return newHostVerbCmd(hostVerb[map[string]string]{
		use:   "rm NAME [--json] [--state DIR]",
		short: "Remove a cron job and its history",
		long: `Remove a cron job and its run history. A job with a run in progress is not
removed (exit 2): wait for the run to end.

` + cronExitHelp,
		json: `print {"removed": NAME} as JSON`,
		ask: func(ctx context.Context, c *localapi.Client, args []string) (map[string]string, error) {
			return map[string]string{"removed": args[0]}, c.DeleteCronJob(ctx, args[0])
		},
		write: func(w io.Writer, args []string, _ map[string]string) error {
			return writef(w, "removed cron job %s\n", args[0])
		},
	})
}

func newCronRunCmd() *cobra.Command {
	var opts cronOptions
	cmd := &cobra.Command{
		Use:   "run NAME [--wait] [--json] [--state DIR]",
		Short: "Run a cron job now",
		Long: `Start a run of the job now, outside its schedule, and print its run id. The
run is the operator's: its owner is cron:NAME,run=RUN with no parent, and
its steps are decided as for a scheduled run (approvals.cron_mode for
dangerous ones). If the job's overlap is skip and a run of it is in
progress, the new run is recorded as skipped (exit 1).

--wait blocks until the run ends, prints its steps (command, the gate's
verdict and rule, exit code, output) and exits 0 if it succeeded, 1 if it
failed. Interrupting --wait stops waiting, not the run. --json prints the
run as JSON: {"run_id", "job", "trigger", "started_at", "finished_at",
"status", "error", "steps": [{"command", "verdict", "rule", "exit_code",
"output", …}], …}.

` + cronExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCronRun(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.wait, "wait", false, "wait for the run to end; exit 0 if it succeeded, 1 if not")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the run as JSON")
	return cmd
}

func runCronRun(ctx context.Context, opts cronOptions, name string, stdout io.Writer) error {
	run, err := callHost(ctx, opts.state, func(c *localapi.Client) (store.CronRun, error) {
		run, err := c.RunCronJob(ctx, name)
		if err != nil || !opts.wait || run.Status != store.RunRunning {
			return run, err
		}
		if !opts.json {
			fmt.Fprintf(stdout, "started cron run %s of %s; waiting for it to end\n", run.ID, run.Job)
		}
		return c.CronRun(ctx, run.ID, true)
	})
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(stdout, run, true)
	} else if run.Status == store.RunRunning {
		_, err = fmt.Fprintf(stdout, "started cron run %s of %s (warden cron history %s shows how it ends)\n", run.ID, run.Job, run.Job)
	} else {
		err = printCronRun(stdout, run)
	}
	if err != nil {
		return err
	}
	switch run.Status {
	case store.RunRunning, store.RunSucceeded:
		return nil
	}
	return exitStatus(ExitRunFailed)
}

func newCronHistoryCmd() *cobra.Command {
	var limit int
	cmd := newHostVerbCmd(hostVerb[[]store.CronRun]{
		use:   "history NAME [--json] [--limit N] [--state DIR]",
		short: "Show a cron job's runs and their steps",
		long: `Show the job's runs, newest first, each with its steps: the command, the
gate's verdict and deciding rule, the exit code (-1 when it did not run)
and the output (capped at 64 KiB; for a denied step, the gate's reason).
--limit N shows the newest N runs (default 20; 0 for all).

--json prints an array of {"run_id", "job", "trigger" (schedule, catchup,
manual or parent), "started_at", "finished_at", "status" (running,
succeeded, failed or skipped), "error", "steps": [{"n", "command",
"verdict", "rule", "exit_code", "output", "started_at", "finished_at"}],
…}.

` + cronExitHelp,
		json: "print JSON",
		check: func(*cobra.Command, []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit must be 0 or more, not %d", limit)}
			}
			return nil
		},
		ask: func(ctx context.Context, c *localapi.Client, args []string) ([]store.CronRun, error) {
			return c.CronHistory(ctx, args[0], limit)
		},
		write: printCronHistory,
	})
	cmd.Flags().IntVar(&limit, "limit", 20, "show the newest N runs; 0 for all")
	return cmd
}

// printCronHistory writes the runs of the job args[0] for people.
func printCronHistory(w io.Writer, args []string, runs []store.CronRun) error {
	if len(runs) == 0 {
		return writef(w, "no runs of %s yet\n", args[0])
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := printCronRun(w, r); err != nil {
			return err
		}
	}
	return nil
}

// printCronRun writes a run for people: a header, each step with its
// decision, exit code and output (indented, control characters made
// visible), and how it ended.
func printCronRun(w io.Writer, r store.CronRun) error {
	head := fmt.Sprintf("run %s of %s (%s) started %s", r.ID, r.Job, r.Trigger, r.Started.Local().Format(time.DateTime))
	if r.Parent != "" {
		head += " for " + r.Parent
	}
	fmt.Fprintln(w, sanitize(head))
	printSteps(w, r.Steps)
	end := string(r.Status)
	if !r.Finished.IsZero() {
		end += " at " + r.Finished.Local().Format(time.DateTime)
	}
	if r.Error != "" {
		end += ": " + r.Error
	}
	_, err := fmt.Fprintf(w, "  %s\n", sanitize(end))
	return err
}

// printSteps prints run steps (cron runs and kanban task runs alike):
// command, verdict, rule, exit code and output.
func printSteps(w io.Writer, steps []store.CronStep) {
	for _, st := range steps {
		fmt.Fprintf(w, "  step %d: %s\n", st.N+1, sanitize(st.Command))
		fmt.Fprintf(w, "    %s (%s), exit %d\n", st.Verdict, st.Rule, st.ExitCode)
		out := strings.TrimRight(st.Output, "\n")
		if out == "" {
			continue
		}
		for line := range strings.SplitSeq(out, "\n") {
			fmt.Fprintf(w, "    | %s\n", sanitize(line))
		}
	}
}
