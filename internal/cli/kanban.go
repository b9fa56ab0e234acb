package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// kanbanOptions are the flags of warden kanban and its verbs.
type kanbanOptions struct {
	state     string
	json      bool
	after     []string
	workspace string
	body      string
	steps     []string
	prompt    string
	reason    string
}

// kanbanExitHelp is the exit-status table of warden kanban's verbs.
const kanbanExitHelp = `Exit status:
  0    done
  2    warden is not running, the host refused (the task's status does not
       allow the move), or no such task
  3    usage error, including a bad workspace or an unknown parent`

// newKanbanCmd builds "warden kanban".
func newKanbanCmd() *cobra.Command {
	cmd := parentCmd("kanban", "Add, list, show and move tasks on the running host's kanban board",
		"missing subcommand (warden kanban add | list | show | comment | block | unblock | done | remote)")
	cmd.AddCommand(newKanbanAddCmd(), newListCmd(kanbanList), newKanbanShowCmd(), newKanbanCommentCmd(),
		newKanbanMoveCmd(board.Block), newKanbanMoveCmd(board.Unblock), newKanbanMoveCmd(board.Done), newKanbanRemoteCmd())
	return cmd
}

const kanbanAddLong = `Add a task to the running host's kanban board and print its id. The task is
ready at once unless it waits for parents (--after ID, repeatable): then it
is ready when every parent is done.

The host's dispatcher runs a ready task in a worker process ("warden worker
--task ID": in its own sandbox, stdin /dev/null, a clean environment, a
one-time token on file descriptor 3). The worker runs the task's script
step by step itself, in its sandbox; the host's gate decides each step
first, as the run's kanban owner (kanban:TASK,run=RUN), and the worker
runs exactly what was decided. A dangerous step is decided by
approvals.kanban_mode: deny (the default) or approve at once, nobody
asked; or ask: the host puts it to a human on its web console (any
host's, on a shared store) and the worker waits; no answer within
approvals.timeout is a deny. A denied step blocks the task with the reason
as a comment.
A failing step or a worker that dies sends the task back to ready; after
the failure limit it is blocked with the last error.

--workspace is where the steps run: scratch (default; a fresh directory
per task under the host's scratch directory) or dir:/absolute/path.

The steps: each --step CMD (repeatable, in order), then COMMAND after --.
COMMAND is one shell command line: several arguments are joined with
shell quoting, a single argument is used as written.

A prompt task (--prompt TEXT instead of steps) has the worker run the agent
(llm: in the config file) with TEXT, the task's title and body as its
message, as the run's kanban owner. Every tool call is decided like a step
(approvals.kanban_mode); the agent also gets kanban_comment,
kanban_complete and kanban_block for its own task. If it ends its turn
without completing or blocking the task, the task is done and its last
words are a comment.

` + kanbanExitHelp

func newKanbanAddCmd() *cobra.Command {
	var opts kanbanOptions
	cmd := &cobra.Command{
		Use:   "add TITLE [--after ID]... [--workspace scratch|dir:/abs] [--step CMD]... [-- COMMAND...]",
		Short: "Add a task",
		Long:  kanbanAddLong,
		Example: `  warden kanban add 'run the tests' --workspace dir:/srv/app -- go test ./...
  warden kanban add deploy --after 01J... --step 'make build' --step 'make deploy'
  warden kanban add triage --prompt 'Read the failing test output in ./ci.log and fix the test'`,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runKanbanAdd(cmd.Context(), opts, args, cmd.ArgsLenAtDash(), cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	f := cmd.Flags()
	f.StringArrayVar(&opts.after, "after", nil, "a parent task id: ready when all parents are done; repeatable")
	f.StringVar(&opts.workspace, "workspace", "", "scratch (default) or dir:/absolute/path")
	f.StringVar(&opts.body, "body", "", "the task's description")
	f.StringArrayVar(&opts.steps, "step", nil, "a step's shell command line; repeatable, run in order before COMMAND")
	f.StringVar(&opts.prompt, "prompt", "", "make a prompt task: the worker runs the agent with this message (no steps)")
	f.BoolVar(&opts.json, "json", false, "print the task as JSON")
	return cmd
}

// kanbanAddRequest checks the arguments of warden kanban add: TITLE
// before "--", COMMAND after it (dash is cobra's ArgsLenAtDash).
func kanbanAddRequest(opts kanbanOptions, args []string, dash int) (localapi.KanbanAddRequest, error) {
	var title string
	var command []string
	switch {
	case len(args) == 0 || dash == 0:
		return localapi.KanbanAddRequest{}, usageError{errors.New("missing TITLE (warden kanban add TITLE -- COMMAND...)")}
	case dash < 0 && len(args) > 1:
		return localapi.KanbanAddRequest{}, usageError{fmt.Errorf("put the command after --: warden kanban add %q ... -- %s", args[0], strings.Join(args[1:], " "))}
	case dash > 1:
		return localapi.KanbanAddRequest{}, usageError{fmt.Errorf("one TITLE before --, got %q (quote a title with spaces)", args[:dash])}
	default:
		title, command = args[0], args[1:]
	}
	var steps []string
	if opts.prompt == "" || len(opts.steps) > 0 || len(command) > 0 {
		var err error
		if steps, err = scriptSteps(opts.steps, command); err != nil {
			return localapi.KanbanAddRequest{}, err
		}
	}
	req := localapi.KanbanAddRequest{Title: title, Body: opts.body, After: opts.after, Workspace: opts.workspace, Steps: steps, Prompt: opts.prompt}
	if _, err := localapi.KanbanTaskOf(req); err != nil {
		return localapi.KanbanAddRequest{}, usageError{err}
	}
	return req, nil
}

func runKanbanAdd(ctx context.Context, opts kanbanOptions, args []string, dash int, stdout io.Writer) error {
	req, err := kanbanAddRequest(opts, args, dash)
	if err != nil {
		return err
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := c.AddKanbanTask(ctx, req)
	if apiErr, ok := errors.AsType[*localapi.APIError](err); ok && apiErr.Status == http.StatusBadRequest {
		return usageError{err}
	}
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, t, true)
	}
	_, err = fmt.Fprintln(stdout, t.ID)
	return err
}

// kanbanList is "warden kanban list".
var kanbanList = listSpec[store.Task]{
	use:   "list",
	short: "List the board's tasks",
	long: `List the tasks in the order they were added: id, status, retries, title and
the last error.

--json prints an array of {"id", "title", "body", "status", "workspace",
"script", "parents", "retries", "last_error", "run", "created_at",
"updated_at"}.`,
	fetch: (*localapi.Client).KanbanTasks,
	list: termui.List[store.Task]{
		Empty: "no tasks",
		Columns: []termui.Column[store.Task]{
			{Name: "ID", Cell: func(t store.Task) string { return t.ID }},
			{Name: "STATUS", Cell: func(t store.Task) string { return string(t.Status) }},
			{Name: "RETRIES", Cell: func(t store.Task) string { return fmt.Sprint(t.Retries) }},
			{Name: "TITLE", Cell: func(t store.Task) string { return clip(t.Title, 40) }},
			{Name: "LAST ERROR", Cell: func(t store.Task) string { return clip(t.LastError, 60) }},
		},
		Filters: []termui.Filter[store.Task]{
			{Flag: "status", Usage: "only the tasks in this status", Choices: taskStatuses(),
				Value: func(t store.Task) string { return string(t.Status) }},
		},
	},
}

// taskStatuses are the board's statuses, in board order.
func taskStatuses() []string {
	var out []string
	for _, s := range store.TaskStatuses() {
		out = append(out, string(s))
	}
	return out
}

func newKanbanShowCmd() *cobra.Command {
	var opts kanbanOptions
	cmd := &cobra.Command{
		Use:   "show ID [--json] [--state DIR]",
		Short: "Show a task with its runs, steps and comments",
		Long: `Show a task: its status, workspace and script, its runs (newest first) with
each step's command, the gate's verdict and rule, exit code and output,
and its comments (oldest first).

--json prints {"id", "title", "status", …, "runs": [{"run_id", "status",
"error", "log", "steps": [{"n", "command", "verdict", "rule",
"exit_code", "output", …}], …}], "comments": [{"author", "body",
"time", …}]}.

` + kanbanExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runKanbanShow(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runKanbanShow(ctx context.Context, opts kanbanOptions, id string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	card, err := c.KanbanTask(ctx, id)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, card, true)
	}
	return printCard(stdout, card)
}

// printCard writes a task's card for people.
func printCard(w io.Writer, c board.Card) error {
	fmt.Fprintln(w, sanitize(fmt.Sprintf("task %s: %s", c.ID, c.Title)))
	fmt.Fprintf(w, "  status:    %s", c.Status)
	if c.Retries > 0 {
		fmt.Fprintf(w, " (%d failed run(s))", c.Retries)
	}
	fmt.Fprintln(w)
	if c.LastError != "" {
		fmt.Fprintf(w, "  error:     %s\n", sanitize(c.LastError))
	}
	fmt.Fprintf(w, "  workspace: %s\n", sanitize(c.Workspace))
	if len(c.Parents) > 0 {
		fmt.Fprintf(w, "  after:     %s\n", strings.Join(c.Parents, ", "))
	}
	for i, st := range c.Script {
		fmt.Fprintf(w, "  step %d:    %s\n", i+1, sanitize(st))
	}
	for _, r := range c.Runs {
		fmt.Fprintf(w, "run %s started %s\n", r.ID, r.Started.Local().Format(time.DateTime))
		printSteps(w, r.Steps)
		end := string(r.Status)
		if r.Error != "" {
			end += ": " + r.Error
		}
		fmt.Fprintf(w, "  %s\n", sanitize(end))
		fmt.Fprintf(w, "  log: %s\n", sanitize(r.Log))
	}
	for _, cm := range c.Comments {
		fmt.Fprintln(w, sanitize(fmt.Sprintf("comment by %s at %s: %s", cm.Author, cm.Time.Local().Format(time.DateTime), cm.Body)))
	}
	return nil
}

func newKanbanCommentCmd() *cobra.Command {
	var opts kanbanOptions
	cmd := &cobra.Command{
		Use:   "comment ID TEXT [--json] [--state DIR]",
		Short: "Comment on a task",
		Long: `Add a comment to a task, as the operator: comments are how humans and
workers talk about a task.

` + kanbanExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runKanbanComment(cmd.Context(), opts, args[0], args[1], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the comment as JSON")
	return cmd
}

func runKanbanComment(ctx context.Context, opts kanbanOptions, id, text string, stdout io.Writer) error {
	if strings.TrimSpace(text) == "" {
		return usageError{errors.New("empty comment")}
	}
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	cm, err := c.CommentKanbanTask(ctx, id, text)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, cm, true)
	}
	_, err = fmt.Fprintf(stdout, "commented on task %s\n", id)
	return err
}

// kanbanMoveHelp describes each operator verb.
var kanbanMoveHelp = map[board.Verb][2]string{
	board.Block:   {"Block a task", "Block a task: it waits for a human. A running task's worker run ends as blocked. --reason becomes a comment and the task's last error."},
	board.Unblock: {"Unblock a task", "Unblock a blocked task: its retry count is reset and it is ready again once its parents are done."},
	board.Done:    {"Mark a task done", "Mark a task done by hand; tasks waiting for it may start."},
}

func newKanbanMoveCmd(v board.Verb) *cobra.Command {
	var opts kanbanOptions
	help := kanbanMoveHelp[v]
	cmd := &cobra.Command{
		Use:                   string(v) + " ID [--reason TEXT] [--json] [--state DIR]",
		Short:                 help[0],
		Long:                  help[1] + "\n\n" + kanbanExitHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runKanbanMove(cmd.Context(), opts, v, args[0], cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	cmd.Flags().StringVar(&opts.reason, "reason", "", "why; recorded as a comment")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the task as JSON")
	return cmd
}

func runKanbanMove(ctx context.Context, opts kanbanOptions, v board.Verb, id string, stdout io.Writer) error {
	c, err := hostClient(opts.state)
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := c.MoveKanbanTask(ctx, id, v, opts.reason)
	if err != nil {
		return hostError(err)
	}
	if opts.json {
		return writeJSON(stdout, t, true)
	}
	_, err = fmt.Fprintf(stdout, "task %s is %s\n", t.ID, t.Status)
	return err
}
