package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/shell"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/hookconf"
	"github.com/wardenhq/warden/internal/localapi"
)

// hookInstallOptions are the flags of warden hook install.
type hookInstallOptions struct {
	hookFiles
	binary        string
	state, config string
	timeout       int
	noTest        bool
}

const hookInstallLong = `Wire warden into an agent's hooks: claude-code (~/.claude/settings.json),
codex (~/.codex/hooks.json) or gemini (~/.gemini/settings.json); with
--project, the file of the same name under the project directory (--dir,
default the current one) instead.

The entry is merged into the file: its other keys and the user's other
hooks stay as they were, an earlier warden entry for the agent is
replaced, and the old file is kept beside it as FILE.warden-backup-TIME.
Installing again with the same settings changes nothing. The file must
be a JSON object (warden does not touch one it cannot read).

The entry runs warden-hook, the small hook binary installed beside this
warden (it starts in a few milliseconds, where warden takes tens: the
agent waits for it on every tool call), or this warden binary when
there is no warden-hook beside it: its absolute path (--binary warden or
--binary warden-hook makes it portable for a shared project file), with
--state and --config when given. Its timeout is approvals.timeout plus a minute (--timeout to
set it), so that warden, not the agent, ends a wait for the console.

Then it tests the entry as the agent would run it: a hardline command
must be denied, and a safe one get no decision (or allow, with
hook.allow_safe). warden hook doctor repeats these checks at any time.

Exit status:
  0  installed (or already installed) and the self-test passed
  2  the file could not be read or written, or the self-test failed
  3  usage error`

func newHookInstallCmd() *cobra.Command {
	var o hookInstallOptions
	cmd := &cobra.Command{
		Use:   "install AGENT [--user | --project [--dir DIR]] [--binary PATH] [--state DIR] [--config FILE]",
		Short: "Install warden's hook into Claude Code, Codex or Gemini CLI, and test it",
		Long:  hookInstallLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("want one AGENT: " + agentNames())}
			}
			return knownAgents(cmd, args)
		},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkFiles(); err != nil {
				return err
			}
			return runHookInstall(cmd.Context(), o, hookconf.Agents[args[0]], cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.user, "user", false, "the agent's file in your home directory (the default)")
	f.BoolVar(&o.project, "project", false, "the agent's file in the project directory")
	f.StringVar(&o.dir, "dir", "", "the project directory (default: the current directory)")
	f.StringVar(&o.binary, "binary", "", "the binary the hook runs, warden or warden-hook (default: warden-hook beside this binary, else this binary; absolute paths)")
	f.StringVar(&o.state, "state", "", "--state for the hook command (a host on another state directory)")
	f.StringVar(&o.config, "config", "", "--config for the hook command")
	f.IntVar(&o.timeout, "timeout", 0, "the agent's timeout for the hook, in seconds (default: approvals.timeout + 60)")
	f.BoolVar(&o.noTest, "no-test", false, "do not run the self-test")
	return cmd
}

// knownAgents refuses an argument that names no agent warden installs
// into.
func knownAgents(_ *cobra.Command, args []string) error {
	for _, n := range args {
		if _, ok := hookconf.Agents[n]; !ok {
			return usageError{fmt.Errorf("unknown agent %q: want %s", n, agentNames())}
		}
	}
	return nil
}

// agentNames lists the agents warden installs into.
func agentNames() string {
	names := make([]string, 0, len(hookconf.Agents))
	for n := range hookconf.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// settingsPath resolves the agent's file for the scope flags.
func settingsPath(a hookconf.Agent, project bool, dir string) (string, error) {
	if project {
		if dir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return "", err
			}
			dir = wd
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		return a.Path(hookconf.Project, "", abs)
	}
	home, err := passwdHome()
	if err != nil {
		return "", err
	}
	return a.Path(hookconf.User, home, "")
}

func runHookInstall(ctx context.Context, o hookInstallOptions, a hookconf.Agent, stdout io.Writer) error {
	path, err := settingsPath(a, o.project, o.dir)
	if err != nil {
		return fmt.Errorf("hook install: %w", err)
	}
	bin := o.binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("hook install: find this binary: %w (give --binary)", err)
		}
		if strings.Contains(bin, string(filepath.Separator)+"go-build") {
			return errors.New("hook install: this warden is a temporary go run build; install it (go install ./cmd/warden) or give --binary")
		}
	}
	words := hookWords(bin, o.binary == "", a.Name)
	for _, f := range []struct{ name, v string }{{"--state", o.state}, {"--config", o.config}} {
		if f.v != "" {
			abs, err := filepath.Abs(f.v)
			if err != nil {
				return fmt.Errorf("hook install: %s: %w", f.name, err)
			}
			words = append(words, f.name, abs)
		}
	}
	command, err := quoteWords(words)
	if err != nil {
		return fmt.Errorf("hook install: %w", err)
	}
	timeout := time.Duration(o.timeout) * time.Second
	cfg, err := hookConfig(o.state, o.config)
	if err != nil {
		return fmt.Errorf("hook install: %w", err)
	}
	if o.timeout <= 0 {
		timeout = cfg.Approvals.Timeout + time.Minute
	}
	r, err := a.Install(path, hookconf.Entry{Command: command, Timeout: timeout}, time.Now())
	if err != nil {
		return fmt.Errorf("hook install: %w", err)
	}
	switch {
	case !r.Changed:
		fmt.Fprintf(stdout, "%s: warden's %s hook is already installed; nothing changed.\n", path, a.Event)
	case r.Backup != "":
		fmt.Fprintf(stdout, "%s: installed warden's %s hook (the old file is %s).\n", path, a.Event, r.Backup)
	default:
		fmt.Fprintf(stdout, "%s: created, with warden's %s hook.\n", path, a.Event)
	}
	fmt.Fprintf(stdout, "  command: %s\n", command)
	if o.noTest {
		return nil
	}
	failed := false
	for _, c := range selfTest(ctx, a, command, cfg.Hook.AllowSafe) {
		fmt.Fprintln(stdout, "  "+c.line())
		failed = failed || !c.OK
	}
	if failed {
		fmt.Fprintf(stdout, "The self-test failed: %s would block or misjudge tool calls. Fix the above, then run warden hook doctor %s.\n", a.Title, a.Name)
		return exitStatus(ExitBlocked)
	}
	fmt.Fprintf(stdout, "Self-test passed. Restart %s to load the hook.\n", a.Title)
	return nil
}

// hookWords is the hook's command for the binary bin: warden-hook NAME
// for warden-hook, and for warden, when found is set and warden-hook is
// installed beside it, that warden-hook; else warden hook NAME.
func hookWords(bin string, found bool, name string) []string {
	if filepath.Base(bin) == hookBinary {
		return []string{bin, name}
	}
	if found {
		small := filepath.Join(filepath.Dir(bin), hookBinary)
		if st, err := os.Stat(small); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return []string{small, name}
		}
	}
	return []string{bin, "hook", name}
}

// hookBinary is the small hook binary's name (cmd/warden-hook).
const hookBinary = "warden-hook"

// hookConfig loads the config the hook will use (missing: defaults).
func hookConfig(state, cfgPath string) (*config.Config, error) {
	_, path, _, err := hookLocations(hookOptions{state: state, config: cfgPath}, passwdHome)
	if err != nil {
		return nil, err
	}
	cfg, _, err := config.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return config.Default(), nil
	case err != nil:
		return nil, err
	}
	return cfg, nil
}

// quoteWords renders argv as one shell command line.
func quoteWords(words []string) (string, error) {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangPOSIX)
		if err != nil {
			return "", fmt.Errorf("cannot quote %q for a shell: %w", w, err)
		}
		out[i] = q
	}
	return strings.Join(out, " "), nil
}

// check is one finding of the self-test or warden hook doctor.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Warn marks a finding that is not a failure.
	Warn bool `json:"warn,omitempty"`
}

func (c check) line() string {
	mark := "ok  "
	switch {
	case !c.OK:
		mark = "FAIL"
	case c.Warn:
		mark = "warn"
	}
	return fmt.Sprintf("%s %-9s %s", mark, c.Name, c.Detail)
}

// probeSession is the session id of self-test calls (their audit
// records say external:AGENT/warden-self-test).
const probeSession = "warden-self-test"

// probePayload is a tool call as agent a sends it: a shell command.
func probePayload(a hookconf.Agent, command, cwd string) []byte {
	var p map[string]any
	switch a.Name {
	case "gemini":
		p = map[string]any{"session_id": probeSession, "transcript_path": "", "cwd": cwd, "hook_event_name": "BeforeTool",
			"timestamp": time.Now().UTC().Format(time.RFC3339), "tool_name": "run_shell_command", "tool_input": map[string]any{"command": command}}
	default:
		p = map[string]any{"session_id": probeSession, "transcript_path": nil, "cwd": cwd, "hook_event_name": "PreToolUse",
			"permission_mode": "default", "tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": probeSession}
		if a.Name == "codex" {
			p["turn_id"], p["model"] = probeSession, "warden-self-test"
		}
	}
	b, _ := json.Marshal(p)
	return b
}

// probeVerdict reads a hook's answer: allow, deny, ask, or none.
func probeVerdict(a hookconf.Agent, stdout []byte) (string, error) {
	out := bytes.TrimSpace(stdout)
	if len(out) == 0 {
		return "none", nil
	}
	var v struct {
		Decision string `json:"decision"`
		HSO      struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("the answer is not JSON: %q", out)
	}
	d := v.HSO.PermissionDecision
	if a.Name == "gemini" {
		d = v.Decision
	}
	if d == "" {
		return "none", nil
	}
	return d, nil
}

// runProbe runs the hook command as the agent does (sh -c, the payload
// on stdin) with a plain environment.
func runProbe(ctx context.Context, command string, payload []byte) (stdout []byte, stderr string, exit int, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	home, _ := passwdHome()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.Stdin = bytes.NewReader(payload)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.Bytes(), e.String(), ee.ExitCode(), nil
	}
	return o.Bytes(), e.String(), 0, err
}

// selfTest runs a hardline and a safe command through the hook command:
// the first must be denied, the second get no decision (allow with
// hook.allow_safe; Codex reads no allow, so none there either way).
func selfTest(ctx context.Context, a hookconf.Agent, command string, allowSafe bool) []check {
	cwd := os.TempDir()
	wantSafe := "none"
	if allowSafe && a.Name != "codex" {
		wantSafe = "allow"
	}
	var out []check
	for _, p := range []struct {
		name, cmd, want string
	}{
		{"hardline", "rm -rf /", "deny"},
		{"safe", "true", wantSafe},
	} {
		stdout, stderr, exit, err := runProbe(ctx, command, probePayload(a, p.cmd, cwd))
		c := check{Name: p.name}
		var got string
		switch {
		case err != nil:
			c.Detail = fmt.Sprintf("could not run the hook command: %v", err)
		case exit != 0:
			c.Detail = fmt.Sprintf("`%s`: the hook exited %d: %s", p.cmd, exit, firstLine(stderr))
		default:
			if got, err = probeVerdict(a, stdout); err != nil {
				c.Detail = fmt.Sprintf("`%s`: %v", p.cmd, err)
			} else if got != p.want {
				c.Detail = fmt.Sprintf("`%s`: answered %s, want %s", p.cmd, got, p.want)
			} else {
				c.OK, c.Detail = true, fmt.Sprintf("`%s`: %s", p.cmd, describeVerdict(got))
			}
		}
		out = append(out, c)
	}
	return out
}

func describeVerdict(v string) string {
	if v == "none" {
		return "no decision (the agent's own rules apply)"
	}
	return v
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// hookDoctorOptions are the flags of warden hook doctor.
type hookDoctorOptions struct {
	hookFiles
	json bool
}

// hookFiles are the flags that choose an agent's settings file: in the
// home directory (--user) or in a project (--project, --dir).
type hookFiles struct {
	project, user bool
	dir           string
}

// checkFiles refuses --project with --user.
func (h hookFiles) checkFiles() error {
	if h.project && h.user {
		return usageError{errors.New("--project and --user: choose one")}
	}
	return nil
}

const hookDoctorLong = `Check warden's hook in an agent's settings, end to end: the file reads,
warden's entry is there (once), its matcher covers the tools warden
judges, its binary resolves, its timeout outlasts approvals.timeout, a
hardline command sent through it is denied and a safe one gets no
decision (or allow, with hook.allow_safe), and whether a host runs on
its state directory (with one, dangerous calls wait for the console;
without, Claude Code asks you and Codex and Gemini CLI refuse them).

With no AGENT, every agent whose files hold a warden entry is checked.
Without --user or --project, both files are looked at.

Exit status:
  0  every check passed (warnings allowed)
  2  a check failed, or a named agent has no warden entry
  3  usage error`

func newHookDoctorCmd() *cobra.Command {
	var o hookDoctorOptions
	cmd := &cobra.Command{
		Use:                   "doctor [AGENT...] [--user | --project [--dir DIR]] [--json]",
		Short:                 "Check that warden's hook in Claude Code, Codex or Gemini CLI works",
		Long:                  hookDoctorLong,
		Args:                  knownAgents,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkFiles(); err != nil {
				return err
			}
			return runHookDoctor(cmd.Context(), o, args, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.user, "user", false, "only the agent's file in your home directory")
	f.BoolVar(&o.project, "project", false, "only the agent's file in the project directory")
	f.StringVar(&o.dir, "dir", "", "the project directory (default: the current directory)")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	return cmd
}

// doctorReport is one settings file's findings.
type doctorReport struct {
	Agent  string  `json:"agent"`
	Path   string  `json:"path"`
	Checks []check `json:"checks"`
}

func runHookDoctor(ctx context.Context, o hookDoctorOptions, names []string, stdout io.Writer) error {
	named := len(names) > 0
	if !named {
		for n := range hookconf.Agents {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var reports []doctorReport
	failed := false
	for _, n := range names {
		a := hookconf.Agents[n]
		var paths []string
		for _, project := range []bool{false, true} {
			if (project && o.user) || (!project && o.project) {
				continue
			}
			p, err := settingsPath(a, project, o.dir)
			if err != nil {
				reports = append(reports, doctorReport{Agent: n, Checks: []check{{Name: "settings", Detail: err.Error()}}})
				failed = true
				continue
			}
			if len(paths) == 0 || paths[0] != p {
				paths = append(paths, p)
			}
		}
		found := 0
		for _, p := range paths {
			f, err := a.Find(p)
			switch {
			case err != nil:
				reports = append(reports, doctorReport{Agent: n, Path: p, Checks: []check{{Name: "settings", Detail: err.Error()}}})
				failed = true
				continue
			case f.Entries == 0:
				continue
			}
			found++
			r := doctorReport{Agent: n, Path: p, Checks: doctorChecks(ctx, a, f)}
			for _, c := range r.Checks {
				failed = failed || !c.OK
			}
			reports = append(reports, r)
		}
		if found == 0 && named {
			reports = append(reports, doctorReport{Agent: n, Path: strings.Join(paths, ", "),
				Checks: []check{{Name: "installed", Detail: "no warden entry; run: warden hook install " + n}}})
			failed = true
		}
	}
	if o.json {
		if reports == nil {
			reports = []doctorReport{}
		}
		if err := writeJSON(stdout, map[string]any{"ok": !failed, "reports": reports}, true); err != nil {
			return err
		}
	} else {
		if len(reports) == 0 {
			fmt.Fprintln(stdout, "No agent's settings hold a warden hook. Install one: warden hook install claude-code (or codex, gemini).")
		}
		for _, r := range reports {
			fmt.Fprintf(stdout, "%s  %s\n", hookconf.Agents[r.Agent].Title, r.Path)
			for _, c := range r.Checks {
				fmt.Fprintln(stdout, "  "+c.line())
			}
		}
	}
	if failed {
		return exitStatus(ExitBlocked)
	}
	return nil
}

// doctorChecks checks one installed entry.
func doctorChecks(ctx context.Context, a hookconf.Agent, f hookconf.Found) []check {
	checks := []check{{Name: "entry", OK: true, Detail: fmt.Sprintf("%s: %s", a.Event, f.Command)}}
	if f.Entries > 1 {
		checks[0].Warn, checks[0].Detail = true, fmt.Sprintf("%d warden entries for %s; the agent runs them all (warden hook install leaves one)", f.Entries, a.Event)
	}
	m := check{Name: "matcher", OK: true, Detail: f.Matcher}
	if f.Matcher != a.Matcher {
		m.Warn, m.Detail = true, fmt.Sprintf("%q, not %q: tools outside it are not judged", f.Matcher, a.Matcher)
	}
	checks = append(checks, m)

	words, err := shell.Fields(f.Command, func(string) string { return "" })
	bin := check{Name: "binary"}
	switch {
	case err != nil || len(words) == 0:
		bin.Detail = fmt.Sprintf("cannot read the command: %v", err)
	default:
		if p, err := exec.LookPath(words[0]); err != nil {
			bin.Detail = fmt.Sprintf("%s: %v (the agent would fail every call: Claude Code lets calls through on that)", words[0], err)
		} else {
			bin.OK, bin.Detail = true, p
		}
	}
	checks = append(checks, bin)

	state, cfgPath := flagValue(words, "--state"), flagValue(words, "--config")
	cfg, cerr := hookConfig(state, cfgPath)
	switch {
	case cerr != nil:
		checks = append(checks, check{Name: "config", Detail: cerr.Error()})
	default:
		need := cfg.Approvals.Timeout
		got := time.Duration(f.Timeout * float64(time.Second))
		if a.Millis {
			got = time.Duration(f.Timeout * float64(time.Millisecond))
		}
		t := check{Name: "timeout", OK: true, Detail: fmt.Sprintf("%v (approvals.timeout %v)", got, need)}
		switch {
		case f.Timeout == 0:
			t.Warn, t.Detail = true, fmt.Sprintf("none set: the agent's default may end a wait for the console before approvals.timeout (%v)", need)
		case got <= need:
			t.Warn, t.Detail = true, fmt.Sprintf("%v is not above approvals.timeout (%v): the agent may give up on the console first", got, need)
		}
		checks = append(checks, t)
	}
	if bin.OK {
		allowSafe := cerr == nil && cfg.Hook.AllowSafe
		checks = append(checks, selfTest(ctx, a, f.Command, allowSafe)...)
	}
	checks = append(checks, hostCheck(ctx, a, state))
	return checks
}

// flagValue returns the value of --name (or --name=v) in words.
func flagValue(words []string, name string) string {
	for i, w := range words {
		if w == name && i+1 < len(words) {
			return words[i+1]
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}

// hostCheck says whether a host serves the hook's state directory. It
// is information, not a failure: without one, the hook decides locally.
func hostCheck(ctx context.Context, a hookconf.Agent, state string) check {
	st, _, _, err := hookLocations(hookOptions{state: state}, passwdHome)
	if err != nil {
		return check{Name: "host", Detail: err.Error()}
	}
	c := localapi.NewClient(filepath.Join(st, localapi.SocketName))
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.Approvals(ctx)
	without := "the agent's own prompt asks for dangerous calls"
	if a.Name != "claude-code" {
		without = "dangerous calls are refused (" + a.Title + "'s hooks cannot ask) until one runs"
	}
	switch {
	case errors.Is(err, localapi.ErrNotRunning):
		return check{Name: "host", OK: true, Warn: true, Detail: "no host on " + st + ": decided locally; " + without}
	case err != nil:
		return check{Name: "host", OK: true, Warn: true, Detail: "the host on " + st + " refused this check: " + err.Error()}
	}
	return check{Name: "host", OK: true, Detail: "running on " + st + ": dangerous calls wait for approval on its console"}
}
