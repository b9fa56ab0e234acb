package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/host"
	"github.com/wardenhq/warden/internal/localapi"
)

// hookOptions are the flags of warden hook PROTOCOL.
type hookOptions struct {
	log    logOptions // --log-format, --log-level
	state  string
	config string
}

const hookLong = `Put another agent's tool calls through warden's gate. The agent runs
warden hook PROTOCOL before each tool call with the call on stdin; warden
answers on stdout.

When a host is running (warden serve on --state), its gate decides as the
owner external:AGENT/SESSION, an attended session whose human answers on
the web console or with warden approvals: a dangerous call waits there
for the answer, up to approvals.timeout, and silence is a deny. With no
host running, warden decides locally from the same config and store
(hardline, deny rules, grants) and records the decision in the audit log:
safe calls are allowed, blocked ones denied, and what needs a human is
answered "ask", so the agent asks its own user.

warden hook reads no environment variable to find its state and config
(the agent whose calls it judges sets its environment): it uses
~/.local/state/warden and ~/.config/warden/config.yaml, with ~ the home
directory of your user in the password database, or --state and
--config given on its command line. When warden serve runs with another
state directory, give the same --state (and --config) in the hook's
command.`

const hookClaudeLong = `Answer Claude Code's PreToolUse hook. warden hook install claude-code
writes the entry into ~/.claude/settings.json (or, with --project,
.claude/settings.json) and tests it; by hand:

  {"hooks":{"PreToolUse":[{"matcher":"Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|mcp__.*",
    "hooks":[{"type":"command","command":"warden hook claude-code","timeout":600}]}]}}

Set "timeout" (seconds) above approvals.timeout, so that warden, not
Claude Code, ends a wait for the console: when Claude Code kills a hook
it goes on with its own permission prompt.

Bash is decided as a shell command in the payload's cwd; Write, Edit,
MultiEdit and NotebookEdit as writes of their file; mcp__SERVER__TOOL as
an MCP call with tool_input as its arguments. A write is judged on
where the path leads (symlinks followed): a link named notes.txt to
~/.bashrc is a write to ~/.bashrc. Read, Grep and Glob of a secret (SSH
keys, cloud and registry credentials, .env files, tokens) get ask, so
Claude Code asks you before the secret reaches the model; of warden's
own files, or of a path an approvals.deny rule "read PATH" names, deny.
Other reads, and other tools (WebFetch…), get no answer: Claude Code
applies its own rules.

The hook never weakens Claude Code's own guard: a call warden allows
with no human behind it (a safe command) gets no decision, so Claude
Code's own permissions apply as if no hook ran; a dangerous call gets
ask (no host) or waits for the console (a host running), and hardline
operations and floors get deny. Set hook.allow_safe: true to answer
allow for safe calls instead (Claude Code then skips its prompt for
them). An allow a human stands behind — approved on the console, or
covered by a grant — is answered allow.
The owner is external:claude-code/SESSION_ID, one session per Claude Code
session: its session grants and pending questions are its own.

Output: {"hookSpecificOutput":{"hookEventName":"PreToolUse",
"permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}}
with exit status 0, or nothing (no decision). A payload warden cannot
read, and any failure to decide, exit 2 with the reason on stderr, which
Claude Code treats as a block. (Claude Code lets a call through on any
other non-zero status, so mind a mistyped command path.)
permission_mode changes nothing.`

const hookCodexLong = `Answer the Codex CLI's PreToolUse hook. warden hook install codex writes
the entry into ~/.codex/hooks.json (or, with --project, .codex/hooks.json)
and tests it; Codex asks you to trust a new hook before it runs it.

Bash is decided as a shell command in the payload's cwd; apply_patch as a
write of every file the patch adds, updates, moves or deletes (the
worst answer wins); mcp__SERVER__TOOL as an MCP call. Other tools get no
answer.

Codex honours one decision from this hook, deny: so a blocked call is
{"hookSpecificOutput":{"hookEventName":"PreToolUse",
"permissionDecision":"deny","permissionDecisionReason":"…"}}, and an
allowed one prints nothing (Codex's own approval policy applies, as
without a hook). Codex's hook cannot ask its user: a call that needs a
human while no host runs is denied with a reason that says to start
warden serve, whose console then asks. Unreadable input and failures
exit 2 with the reason on stderr, which Codex treats as a block.`

const hookGeminiLong = `Answer Gemini CLI's BeforeTool hook. warden hook install gemini writes
the entry into ~/.gemini/settings.json (or, with --project,
.gemini/settings.json) and tests it.

run_shell_command is decided as a shell command (in dir_path, if given);
write_file and replace as writes of file_path; MCP tools as MCP calls
(server and tool from mcp_context). read_file, read_many_files,
grep_search and glob of a secret are refused (Gemini CLI's hooks cannot
ask); of anything else they get no answer.

Output: {"decision":"allow|deny","reason":"…"}, or {} for no decision
(Gemini CLI's own confirmation applies): a call warden allows with no
human behind it gets {} unless hook.allow_safe is true. Gemini CLI's
hooks have no ask: a call that needs a human while no host runs is
denied with a reason that says to start warden serve. Unreadable input
and failures exit 2 with the reason on stderr (a block).`

const hookGenericLong = `Answer warden's generic hook protocol (version 1), for agents without
a protocol of their own. Input, one JSON object on stdin:

  {"version":1,"agent":"NAME","session":"ID",
   "action":{"kind":"shell","command":"git push","dir":"/abs/dir"}}

agent and session are required (owner external:NAME/ID); action is
warden's action JSON: kind shell (command), code (language, source),
write (path, absolute; size), mcp (server, tool, args) or plugin (plugin,
rule_key, reason), with dir absolute when given. Unknown fields, a
backend or a read_only hint are refused. Output, one JSON object:

  {"version":1,"decision":"allow|deny|ask","reason":"…","rule":"…",
   "request_id":"…","classes":["…"]}

Exit status: 0 allow, 1 ask (no host: ask your own human, or treat it as
deny), 2 deny — also for malformed input and any failure (fail closed).`

// newHookCmd builds "warden hook" and its protocols.
func newHookCmd() *cobra.Command {
	cmd := parentCmd("hook", "Answer other agents' permission hooks through the gate", "missing PROTOCOL (claude-code, codex, gemini or generic), install or doctor")
	cmd.Use = "hook PROTOCOL"
	cmd.Long = hookLong
	cmd.AddCommand(
		newHookProtocolCmd("claude-code", "Answer Claude Code's PreToolUse hook", hookLong+"\n\n"+hookClaudeLong, hook.ClaudeCode{}),
		newHookProtocolCmd("codex", "Answer the Codex CLI's PreToolUse hook", hookLong+"\n\n"+hookCodexLong, hook.Codex{}),
		newHookProtocolCmd("gemini", "Answer Gemini CLI's BeforeTool hook", hookLong+"\n\n"+hookGeminiLong, hook.Gemini{}),
		newHookProtocolCmd("generic", "Answer warden's generic JSON hook protocol", hookLong+"\n\n"+hookGenericLong, hook.Generic{}),
		newHookInstallCmd(),
		newHookDoctorCmd(),
	)
	return cmd
}

func newHookProtocolCmd(name, short, long string, p hook.Protocol) *cobra.Command {
	var opts hookOptions
	cmd := &cobra.Command{
		Use:                   name + " [--state DIR] [--config FILE] < PAYLOAD",
		Short:                 short,
		Long:                  long,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.log = logOptionsOf(cmd)
			return runHook(cmd.Context(), opts, p, os.Environ(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&opts.state, "state", "", "state directory of the host (default ~/.local/state/warden, ~ from the password database: the hook reads no environment variable)")
	cmd.Flags().StringVar(&opts.config, "config", "", "config file for local decisions when no host runs (default ~/.config/warden/config.yaml, ~ from the password database)")
	return cmd
}

// failingDecider fails every call: the hook still reads its input and
// answers deny in the protocol's own way.
type failingDecider struct{ err error }

func (f failingDecider) Decide(context.Context, hook.Call) (hook.Answer, error) {
	return hook.Answer{}, f.err
}

// runHook answers one hook call: the exit status is the protocol's.
func runHook(ctx context.Context, opts hookOptions, p hook.Protocol, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	d, ho, closeFn := hookDecider(opts, environ, stderr)
	defer closeFn()
	r := hook.Handle(ctx, p, stdin, d, ho)
	if _, err := stdout.Write(r.Stdout); err != nil {
		return fmt.Errorf("hook: write answer: %w", err)
	}
	if r.Stderr != "" {
		fmt.Fprintln(stderr, sanitize(strings.TrimRight(r.Stderr, "\n")))
	}
	if r.Exit != 0 {
		return exitStatus(r.Exit)
	}
	return nil
}

// hookDecider resolves the paths and returns the decider and the
// config's hook: settings; a path that cannot be resolved, or a config
// that cannot be read, gives a decider that fails (deny).
func hookDecider(opts hookOptions, environ []string, stderr io.Writer) (hook.Decider, hook.Options, func()) {
	state, cfgPath, paths, err := hookLocations(opts, passwdHome)
	if err != nil {
		return failingDecider{err}, hook.Options{}, func() {}
	}
	cfg, _, err := config.Load(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cfg = config.Default()
	case err != nil:
		return failingDecider{err}, hook.Options{}, func() {}
	}
	c := localapi.NewClient(filepath.Join(state, localapi.SocketName))
	return host.ExternalDecider{
		Client: c,
		Local: host.LocalConfig{
			StateDir: state, ConfigPath: cfgPath, Paths: paths, Environ: environ,
			Logger: opts.log.logger(stderr, slog.LevelWarn),
		},
		Pending: func(e localapi.Event) {
			where := e.Console
			if where == "" {
				where = "the web console"
			}
			fmt.Fprintf(stderr, "warden: waiting for approval of request %s on %s (or: warden approvals approve %s)\n", e.ID, where, e.ID)
		},
	}, hook.Options{AllowSafe: cfg.Hook.AllowSafe}, c.Close
}
