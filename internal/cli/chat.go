package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wardenhq/warden/internal/host"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// chatOptions are the flags of warden chat.
type chatOptions struct {
	log    logOptions // --log-format, --log-level
	state  string
	config string
	yolo   bool
	// query is -q: one message to the agent, no answer channel.
	query string
}

const chatLong = `Start an interactive terminal session (owner cli, a new session key each
time). Lines starting with ! run shell commands through the gate, as this
session, in the current directory; any other line is a message to the
agent (llm: in the config file), whose every tool call is decided by the
gate as this session. Without a model configured, chat says how to set one
and !COMMAND still works.

-q MESSAGE is a single-query run: the agent answers one message and chat
exits. It has no answer channel, whatever stdin is: the session is a
single_query run, so its dangerous tool calls follow
approvals.single_query_mode (deny by default) and nobody is asked.

When stdin is a terminal, the terminal is the session's answer channel: a
dangerous command stops at a prompt that shows what was found, with a
countdown to approvals.timeout:

  [o]nce [s]ession [a]lways [d]eny

o runs it this once, s for the rest of this session, a always (both record
the exact command line; a asks y/n to confirm first, since it holds for
every session), d denies; Ctrl-C, end of input or the countdown running
out deny. The choice taken is echoed. The question is also in the host's queue (warden
approvals list), and an answer there is taken too.

When stdin is not a terminal there is no answer channel: the session is a
single_query run and dangerous commands follow approvals.single_query_mode
(deny by default); nobody is asked.

chat keeps its state with the host's (--state): the same store, grants and
audit chain, so warden audit shows chat's decisions too. --yolo turns on
yolo for this session only: its dangerous commands run without asking
(hardline commands and deny rules still block).

An MCP server's question (elicitation) during one of the agent's tool
calls is asked at this terminal too, with the same single keys: the
server's message, then each form field — y/n for a yes-or-no field, a
number or letter for one of a list, a typed line for text; Enter leaves
an optional field out — then a to accept or d to decline. Each answer is
echoed as it was taken. Without a terminal it is declined at once.

Exit status: 0 at the end of input (-q: the agent answered); 2 if the
state or config cannot be opened, or -q without a model or when the
model fails; 3 usage error; 130 interrupted.`

// newChatCmd builds "warden chat". The edge decides here whether stdin
// is a terminal and where prompts are drawn.
func newChatCmd() *cobra.Command {
	var opts chatOptions
	cmd := &cobra.Command{
		Use:                   "chat [--state DIR] [--config FILE] [--yolo] [-q MESSAGE]",
		Short:                 "An interactive terminal session: !COMMAND runs a shell command through the gate",
		Long:                  chatLong,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var t *terminal
			if opts.query == "" {
				t = openTerminal(cmd.InOrStdin(), cmd.ErrOrStderr())
				defer t.close()
			}
			dir, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("chat: working directory: %w", err)
			}
			opts.log = logOptionsOf(cmd)
			return runChat(cmd.Context(), opts, chatEnv{
				stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(),
				term: t, environ: os.Environ(), dir: dir, user: currentUser(),
			})
		},
	}
	addStateFlag(cmd, &opts.state)
	addConfigFlag(cmd, &opts.config)
	cmd.Flags().BoolVar(&opts.yolo, "yolo", false, "run this session's dangerous commands without asking (floors still apply)")
	cmd.Flags().StringVarP(&opts.query, "query", "q", "", "ask the agent one message and exit (single_query: nobody is asked)")
	return cmd
}

// chatEnv is everything chat takes from the process, resolved at the
// edge.
type chatEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// term is the terminal prompts are drawn on, or nil when stdin is
	// not one (no answer channel).
	term    *terminal
	environ []string
	dir     string
	user    string
}

// terminal is the controlling terminal: where prompts are drawn, and how
// to read single keys from stdin.
type terminal struct {
	w io.Writer
	// raw puts stdin in raw mode and returns the restore function; nil
	// reads keys from lines.
	raw    func() (func(), error)
	closer io.Closer
}

func (t *terminal) close() {
	if t != nil && t.closer != nil {
		t.closer.Close()
	}
}

// openTerminal returns the terminal when stdin is one: prompts go to
// /dev/tty (stderr if it cannot be opened), keys are read raw.
func openTerminal(stdin io.Reader, stderr io.Writer) *terminal {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	t := &terminal{w: stderr}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		t.w, t.closer = tty, tty
	}
	fd := int(f.Fd())
	t.raw = func() (func(), error) {
		st, err := term.MakeRaw(fd)
		if err != nil {
			return nil, err
		}
		return func() { _ = term.Restore(fd, st) }, nil
	}
	return t
}

// currentUser is who answers at this terminal, as far as it is proven:
// the process's uid (and its name in the password database), at the
// terminal of this warden chat — not a name from the environment.
func currentUser() string {
	uid := strconv.Itoa(os.Getuid())
	who := "uid " + uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		who += " (" + u.Username + ")"
	}
	return who + " at the terminal of warden chat pid " + strconv.Itoa(os.Getpid())
}

// terminalChannel is the answer channel of an attended chat session: the
// terminal it runs in. It asks its human itself (broker.Prompter): the
// broker hands it every question of the session — the session's own
// commands, the agent's tool calls, MCP servers' questions.
type terminalChannel struct{ c *chat }

// Prompt implements broker.Prompter.
func (t terminalChannel) Prompt(ctx context.Context, r store.Request) { t.c.prompt(ctx, r) }

// Surface implements owner.AnswerChannel.
func (terminalChannel) Surface() string { return "terminal" }

// runChat is warden chat.
func runChat(ctx context.Context, opts chatOptions, env chatEnv) error {
	state, cfgPath, err := resolveStateAndConfig(opts.state, opts.config)
	if err != nil {
		return err
	}
	local, err := host.OpenLocal(ctx, host.LocalConfig{
		StateDir: state, ConfigPath: cfgPath, Paths: hostPaths(cfgPath), Environ: env.environ, Commands: true,
		Logger: opts.log.logger(env.stderr, slog.LevelWarn),
	})
	if err != nil {
		return err
	}
	key := "chat-" + strings.ToLower(ulid.Make().String())
	defer func() {
		end := context.WithoutCancel(ctx)
		local.EndSession(end, key, "chat ended") // the session is over: drop its shell state
		_ = local.Close(end, "chat ended")
	}()
	// The terminal is a surface: it talks to the host through
	// surface.Host, implemented here in process (chat runs without
	// warden serve, on the host's state directory).
	c := &chat{key: key, local: local, host: local.Surface(env.dir), env: env, in: newInput(env.stdin)}
	o, err := chatOwner(key, env.term != nil, c)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	c.owner = o
	if _, err := c.host.Session(ctx, o); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	if opts.yolo {
		if err := c.host.SetYolo(ctx, key, true, c.identity()); err != nil {
			return fmt.Errorf("chat: %w", err)
		}
	}
	if opts.query != "" {
		return c.query(owner.With(ctx, o), opts.query)
	}
	c.intro(state, local.ConfigStatus, opts.yolo)
	return c.loop(owner.With(ctx, o))
}

// chatOwner is the session's owner: cli with the terminal as its answer
// channel, or single_query when there is no terminal to ask on.
func chatOwner(key string, attended bool, c *chat) (owner.Owner, error) {
	if !attended {
		return owner.SingleQuery().WithSession(key)
	}
	o, err := owner.CLI().WithSession(key)
	if err != nil {
		return owner.Owner{}, err
	}
	return o.WithChannel(terminalChannel{c: c})
}

// chat is one running chat session.
type chat struct {
	// midLine is set while streamed words have not ended their line.
	midLine bool
	key     string
	owner   owner.Owner
	// local is the in-process host (its status for the intro); host is
	// its surface interface, through which chat does everything else.
	local *host.Local
	host  surface.Host
	env   chatEnv
	in    *input
}

func (c *chat) intro(state, cfgStatus string, yolo bool) {
	w := c.env.stdout
	fmt.Fprintf(w, "warden chat: session %s (owner %s)\n", c.key, c.owner)
	fmt.Fprintf(w, "  state:  %s\n", state)
	fmt.Fprintf(w, "  config: %s\n", cfgStatus)
	if c.env.term != nil {
		fmt.Fprintln(w, "  answers: this terminal — a dangerous command asks here: [o]nce [s]ession [a]lways [d]eny")
	} else {
		fmt.Fprintf(w, "  answers: none — stdin is not a terminal, so this is a single_query session: dangerous commands follow single_query_mode (%s) and nobody is asked\n", c.local.Gate.Policy().SingleQueryMode)
	}
	if yolo {
		if c.env.term != nil {
			fmt.Fprintln(w, "  yolo:   on for this session — dangerous commands run without asking (hardline and deny rules still block)")
		} else {
			fmt.Fprintln(w, "  yolo:   on, but it does not apply: a session nobody attends follows its mode")
		}
	}
	if sb := c.local.Sandbox; sb != nil {
		switch st := sb.Status(); {
		case st.Refusing:
			fmt.Fprintf(w, "  sandbox: UNAVAILABLE, every command is refused: %s (run `warden doctor`)\n", st.Why)
		case !st.Active:
			fmt.Fprintln(w, "  sandbox: OFF (sandbox.mode: off): commands run unconfined")
		default:
			fmt.Fprintf(w, "  sandbox: %s\n", st.Mode)
		}
	}
	if c.host.Agent() {
		fmt.Fprintf(w, "  agent:  %s\n", c.local.AgentStatus)
		fmt.Fprintln(w, "Type a message for the agent, or !COMMAND to run a shell command. End of input (Ctrl-D) leaves.")
	} else {
		fmt.Fprintf(w, "  agent:  %s\n", c.local.AgentStatus)
		fmt.Fprintln(w, "Type !COMMAND to run a shell command. End of input (Ctrl-D) leaves.")
	}
}

// loop reads lines until the end of input.
func (c *chat) loop(ctx context.Context) error {
	for {
		if c.env.term != nil {
			fmt.Fprint(c.env.term.w, "> ")
		}
		line, err := c.in.line(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "!"):
			if err := c.shell(ctx, strings.TrimSpace(line[1:])); err != nil {
				return err
			}
		default:
			if err := c.ask(ctx, line); err != nil {
				return err
			}
		}
	}
}

// shell runs one !COMMAND through the runner: gate, audit, (ask), audit,
// run.
func (c *chat) shell(ctx context.Context, command string) error {
	if command == "" {
		fmt.Fprintln(c.env.stderr, "warden: !COMMAND needs a command")
		return nil
	}
	// A question is asked at the terminal by its answer channel.
	out, _ := c.host.Shell(ctx, c.owner, command, c.env.stdout, c.env.stderr)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	switch {
	case !out.Ran:
		fmt.Fprintf(c.env.stderr, "warden: %s\n", sanitize(out.Message))
	case out.Exit != 0:
		fmt.Fprintf(c.env.stderr, "[exit %d]\n", out.Exit)
	}
	return nil
}

// identity is who answers at this terminal, as far as it is proven
// (currentUser), recorded as it is.
func (c *chat) identity() surface.Identity {
	return surface.Identity{Surface: terminalChannel{}.Surface(), User: c.env.user, Credential: c.env.user}
}
