package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
}

// kanbanExitHelp is the exit-status table of warden kanban's verbs.
const kanbanExitHelp = `Exit status:
  0    done
  2    warden is not running, the host refused (the task's status does not
       allow the move), or no such task
  3    usage error, including a bad workspace or an unknown parent`

// newKanbanCmd builds "warden kanban".
func newKanbanCmd() *cobra.Command {
	return parentCmd("kanban", "Add, list, show and move tasks on the running host's kanban board",
		"missing subcommand (warden kanban add | list | show | comment | block | unblock | done | remote)",
		newKanbanAddCmd(), newListCmd(kanbanList), newKanbanShowCmd(), newKanbanCommentCmd(),
		newKanbanMoveCmd(board.Block), newKanbanMoveCmd(board.Unblock), newKanbanMoveCmd(board.Done), newKanbanRemoteCmd())
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
	cmd := newAddCmd(hostVerb[store.Task]{
		use:   "add TITLE [--after ID]... [--workspace scratch|dir:/abs] [--step CMD]... [-- COMMAND...]",
		short: "Add a task",
		long:  kanbanAddLong,
		example: `  warden kanban add 'run the tests' --workspace dir:/srv/app -- go test ./...
  warden kanban add deploy --after 01J... --step 'make build' --step 'make deploy'
  warden kanban add triage --prompt 'Read the failing test output in ./ci.log and fix the test'`,
		json:  "print the task as JSON",
		write: func(w io.Writer, _ []string, t store.Task) error { return writef(w, "%s\n", t.ID) },
	}, func(args []string, dash int) (localapi.KanbanAddRequest, error) {
		return kanbanAddRequest(opts, args, dash)
	}, (*localapi.Client).AddKanbanTask)
	f := cmd.Flags()
	f.StringArrayVar(&opts.after, "after", nil, "a parent task id: ready when all parents are done; repeatable")
	f.StringVar(&opts.workspace, "workspace", "", "scratch (default) or dir:/absolute/path")
	f.StringVar(&opts.body, "body", "", "the task's description")
	f.StringArrayVar(&opts.steps, "step", nil, "a step's shell command line; repeatable, run in order before COMMAND")
	f.StringVar(&opts.prompt, "prompt", "", "make a prompt task: the worker runs the agent with this message (no steps)")
	return cmd
}

// kanbanAddSyntax words the usage errors of warden kanban add's arguments.
var kanbanAddSyntax = addSyntax{verb: "warden kanban add", word: "TITLE", tail: " -- COMMAND...", shown: "%q", hint: " (quote a title with spaces)"}

// kanbanAddRequest checks the arguments of warden kanban add: TITLE
// before "--", COMMAND after it (dash is cobra's ArgsLenAtDash).
func kanbanAddRequest(opts kanbanOptions, args []string, dash int) (localapi.KanbanAddRequest, error) {
	title, steps, err := kanbanAddSyntax.parse(args, dash, opts.prompt, opts.steps)
	if err != nil {
		return localapi.KanbanAddRequest{}, err
	}
	req := localapi.KanbanAddRequest{Title: title, Body: opts.body, After: opts.after, Workspace: opts.workspace, Steps: steps, Prompt: opts.prompt}
	if _, err := localapi.KanbanTaskOf(req); err != nil {
		return localapi.KanbanAddRequest{}, usageError{err}
	}
	return req, nil
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
	return newHostVerbCmd(hostVerb[board.Card]{
		use:   "show ID [--json] [--state DIR]",
		short: "Show a task with its runs, steps and comments",
		long: `Show a task: its status, workspace and script, its runs (newest first) with
each step's command, the gate's verdict and rule, exit code and output,
and its comments (oldest first).

--json prints {"id", "title", "status", …, "runs": [{"run_id", "status",
"error", "log", "steps": [{"n", "command", "verdict", "rule",
"exit_code", "output", …}], …}], "comments": [{"author", "body",
"time", …}]}.

` + kanbanExitHelp,
		json: "print JSON",
		ask: func(ctx context.Context, c *localapi.Client, args []string) (board.Card, error) {
			return c.KanbanTask(ctx, args[0])
		},
		write: func(w io.Writer, _ []string, card board.Card) error { return printCard(w, card) },
	})
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
	return newHostVerbCmd(hostVerb[store.TaskComment]{
		use:   "comment ID TEXT [--json] [--state DIR]",
		short: "Comment on a task",
		long: `Add a comment to a task, as the operator: comments are how humans and
workers talk about a task.

` + kanbanExitHelp,
		args: cobra.ExactArgs(2),
		json: "print the comment as JSON",
		check: func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(args[1]) == "" {
				return usageError{errors.New("empty comment")}
			}
			return nil
		},
		ask: func(ctx context.Context, c *localapi.Client, args []string) (store.TaskComment, error) {
			return c.CommentKanbanTask(ctx, args[0], args[1])
		},
		write: func(w io.Writer, args []string, _ store.TaskComment) error {
			return writef(w, "commented on task %s\n", args[0])
		},
	})
}

// kanbanMoveHelp describes each operator verb.
var kanbanMoveHelp = map[board.Verb][2]string{
	board.Block:   {"Block a task", "Block a task: it waits for a human. A running task's worker run ends as blocked. --reason becomes a comment and the task's last error."},
	board.Unblock: {"Unblock a task", "Unblock a blocked task: its retry count is reset and it is ready again once its parents are done."},
	board.Done:    {"Mark a task done", "Mark a task done by hand; tasks waiting for it may start."},
}

func newKanbanMoveCmd(v board.Verb) *cobra.Command {
	var reason string
	help := kanbanMoveHelp[v]
	cmd := newHostVerbCmd(hostVerb[store.Task]{
		use:   string(v) + " ID [--reason TEXT] [--json] [--state DIR]",
		short: help[0],
		long:  help[1] + "\n\n" + kanbanExitHelp,
		json:  "print the task as JSON",
		ask: func(ctx context.Context, c *localapi.Client, args []string) (store.Task, error) {
			return c.MoveKanbanTask(ctx, args[0], v, reason)
		},
		write: func(w io.Writer, _ []string, t store.Task) error {
			return writef(w, "task %s is %s\n", t.ID, t.Status)
		},
	})
	cmd.Flags().StringVar(&reason, "reason", "", "why; recorded as a comment")
	return cmd
}
