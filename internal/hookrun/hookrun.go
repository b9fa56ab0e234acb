package hookrun

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/reads"
)

// Protocols are the hook protocols by the name agents' settings give.
var Protocols = map[string]hook.Protocol{
	"claude-code": hook.ClaudeCode{},
	"codex":       hook.Codex{},
	"gemini":      hook.Gemini{},
	"generic":     hook.Generic{},
}

// Exit statuses of warden-hook outside a protocol's own: a usage error.
const exitUsage = 2

// Env is what Main needs from the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Environ is the environment handed to the full binary when no host
	// runs (it is the agent's; nothing here reads it).
	Environ []string
	// Full is the warden binary that decides when no host runs ("":
	// warden beside this executable).
	Full string
	// Home finds the home directory (nil: the password database).
	Home func() (string, error)
}

// Main runs warden-hook with args (after the program name) and returns
// the exit status: PROTOCOL [--state DIR] [--config FILE]
// [--log-format F] [--log-level L].
func Main(ctx context.Context, args []string, env Env) int {
	fl := flag.NewFlagSet("warden-hook", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	state := fl.String("state", "", "state directory of the host (default ~/.local/state/warden, ~ from the password database)")
	cfgPath := fl.String("config", "", "config file (default ~/.config/warden/config.yaml, ~ from the password database)")
	logFormat := fl.String("log-format", "", "log format of the local decision when no host runs (passed to warden)")
	logLevel := fl.String("log-level", "", "log level of the local decision when no host runs (passed to warden)")
	fl.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: warden-hook PROTOCOL [--state DIR] [--config FILE] < PAYLOAD\n  PROTOCOL: claude-code, codex, gemini or generic (see warden hook --help)\n")
		fl.PrintDefaults()
	}
	if len(args) == 0 {
		fl.Usage()
		return exitUsage
	}
	name := args[0]
	p, ok := Protocols[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "warden-hook: unknown protocol %q (claude-code, codex, gemini or generic)\n", name)
		return exitUsage
	}
	if err := fl.Parse(args[1:]); err != nil || fl.NArg() > 0 {
		if err == nil {
			fmt.Fprintf(env.Stderr, "warden-hook: unexpected argument %q\n", fl.Arg(0))
		}
		return exitUsage
	}
	home := env.Home
	if home == nil {
		home = PasswdHome
	}
	// The payload is kept: with no host, the full binary gets it whole.
	var payload bytes.Buffer
	in := io.TeeReader(env.Stdin, &payload)
	d := &decider{env: env, name: name, flags: passFlags(*state, *cfgPath, *logFormat, *logLevel)}
	var ho hook.Options
	st, cp, paths, err := Locations(*state, *cfgPath, home)
	if err == nil {
		d.client = NewClient(filepath.Join(st, SocketName))
		defer d.client.Close()
		d.state, d.config, d.paths = st, cp, paths
		if d.cfg, err = loadConfig(cp); err == nil && d.cfg != nil {
			ho.AllowSafe = d.cfg.Hook.AllowSafe
		}
	}
	d.err = err
	r := hook.Handle(ctx, p, in, d, ho)
	if d.local {
		// No host: the full binary answered; its answer is ours.
		return d.fallback(ctx, io.MultiReader(&payload, env.Stdin))
	}
	if _, err := env.Stdout.Write(r.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "warden-hook: write answer: %v\n", err)
		return exitUsage
	}
	if r.Stderr != "" {
		fmt.Fprintln(env.Stderr, strings.TrimRight(r.Stderr, "\n"))
	}
	return r.Exit
}

// errLocal stops Handle when no host runs: the full binary decides.
var errLocal = errors.New("no host: decided by the warden binary")

// decider decides with the host's gate.
type decider struct {
	env    Env
	name   string
	flags  []string
	err    error // the paths or config could not be read: every call fails (deny)
	client *Client
	state  string
	config string
	paths  reads.Paths
	cfg    *config.Config // nil: the defaults
	local  bool
}

// Decide implements hook.Decider: the host's gate decides, and a
// question waits on its console.
func (d *decider) Decide(ctx context.Context, c hook.Call) (hook.Answer, error) {
	if d.err != nil {
		return hook.Answer{}, d.err
	}
	dec, err := d.client.Decide(ctx, Request{Agent: c.Agent, Session: c.Session, Action: c.Action}, d.pending)
	switch {
	case errors.Is(err, ErrNotRunning):
		d.local = true
		return hook.Answer{}, errLocal
	case err != nil:
		return hook.Answer{}, err
	}
	return Answer(dec), nil
}

// DecideRead implements hook.ReadDecider with the local config: no host
// is needed.
func (d *decider) DecideRead(_ context.Context, c hook.Call) (hook.Answer, error) {
	if d.err != nil {
		return hook.Answer{}, d.err
	}
	pol, err := compile(d.cfg, d.config, ReadPaths(d.paths, d.state, d.config))
	if err != nil {
		return hook.Answer{}, err
	}
	return JudgeRead(pol, c), nil
}

func (d *decider) pending(e Event) {
	where := e.Console
	if where == "" {
		where = "the web console"
	}
	fmt.Fprintf(d.env.Stderr, "warden: waiting for approval of request %s on %s (or: warden approvals approve %s)\n", e.ID, where, e.ID)
}

// fallback runs `warden hook PROTOCOL FLAGS…` on the payload and passes
// its answer and exit status through: with no host, the full binary
// opens the store and decides locally. Failing to run it is a failure
// to decide (exit 2, which agents treat as a block).
func (d *decider) fallback(ctx context.Context, payload io.Reader) int {
	full := d.env.Full
	if full == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(d.env.Stderr, "warden-hook: no host is running, and this binary cannot find itself to find warden: %v\n", err)
			return exitUsage
		}
		full = filepath.Join(filepath.Dir(self), "warden")
	}
	cmd := exec.CommandContext(ctx, full, append([]string{"hook", d.name}, d.flags...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = payload, d.env.Stdout, d.env.Stderr
	cmd.Env = d.env.Environ
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	}
	fmt.Fprintf(d.env.Stderr, "warden-hook: no host is running, and %s could not decide locally: %v\n", full, err)
	return exitUsage
}

// passFlags are the flags handed on to the full binary.
func passFlags(state, cfg, logFormat, logLevel string) []string {
	var out []string
	for _, f := range []struct{ name, v string }{{"--state", state}, {"--config", cfg}, {"--log-format", logFormat}, {"--log-level", logLevel}} {
		if f.v != "" {
			out = append(out, f.name, f.v)
		}
	}
	return out
}

// PasswdHome is the home directory of the process's user in the
// password database: the hook reads no environment variable to find its
// state and config.
func PasswdHome() (string, error) {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return "", fmt.Errorf("find your home directory in the password database: %w", err)
	}
	if !filepath.IsAbs(u.HomeDir) {
		return "", fmt.Errorf("home directory %q of uid %d is not absolute", u.HomeDir, os.Getuid())
	}
	return filepath.Clean(u.HomeDir), nil
}

// Locations are where a hook finds its state and config: state and
// cfgPath as given (its --state and --config), else the default places
// under the home directory. Nothing comes from the environment: the
// hook runs with the environment of the agent it judges, whose settings
// can set XDG_CONFIG_HOME, HOME or WARDEN_STATE to point it at a config
// of the agent's choosing.
func Locations(state, cfgPath string, home func() (string, error)) (string, string, reads.Paths, error) {
	h, herr := home()
	if (state == "" || cfgPath == "") && herr != nil {
		return "", "", reads.Paths{}, fmt.Errorf("%w (or give --state and --config)", herr)
	}
	if state == "" {
		state = filepath.Join(h, ".local", "state", "warden")
	}
	if cfgPath == "" {
		cfgPath = filepath.Join(h, ".config", "warden", "config.yaml")
	}
	var err error
	if state, err = filepath.Abs(state); err != nil {
		return "", "", reads.Paths{}, fmt.Errorf("state directory: %w", err)
	}
	if cfgPath, err = filepath.Abs(cfgPath); err != nil {
		return "", "", reads.Paths{}, fmt.Errorf("config file: %w", err)
	}
	paths := reads.Paths{Home: h, Homes: protect.LookupHome, Protected: []string{cfgPath, filepath.Dir(cfgPath), state}}
	if h != "" {
		paths.Protected = append(paths.Protected, filepath.Join(h, ".config", "warden"), filepath.Join(h, ".local", "state", "warden"))
	}
	return state, cfgPath, paths, nil
}
