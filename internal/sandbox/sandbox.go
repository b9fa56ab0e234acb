package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Mode is how the processes warden starts are confined.
type Mode string

// Modes.
const (
	// WorkspaceWrite: the call may write its workspace, its private
	// temporary directory and sandbox.writable; it reads the rest of the
	// file system except what is hidden. The default.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly: the call writes only its private temporary directory.
	ReadOnly Mode = "read-only"
	// Off: no sandbox. Only when the configuration says so explicitly.
	Off Mode = "off"
)

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case WorkspaceWrite, ReadOnly, Off:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q (want workspace-write, read-only or off)", s)
}

// Sentinel errors.
var (
	// ErrUnavailable: the kernel cannot provide the sandbox, so nothing
	// runs (fail closed). The *UnavailableError says why and what to
	// change.
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrRefused: this call cannot be sandboxed as asked (a workspace
	// that would make the home directory writable, one inside a hidden
	// path); the message says why.
	ErrRefused = errors.New("sandbox refused the call")
	// ErrFenced: the call's run was fenced (its leftovers killed before
	// a retry); nothing more starts for it.
	ErrFenced = errors.New("run was fenced")
)

// UnavailableError is ErrUnavailable with the reason and the fix, for
// the operator. Its Error text is what an agent sees: it names no
// setting (invariant 11) and points the human at `warden doctor`.
type UnavailableError struct {
	// Reason is what the kernel refused.
	Reason string
	// Fix says what to change.
	Fix string
}

func (e *UnavailableError) Error() string {
	return "the sandbox is not available on this host, so warden did not run the command; ask the user to run `warden doctor`"
}

// Is makes errors.Is(err, ErrUnavailable) work.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Detail is the operator's account: reason and fix.
func (e *UnavailableError) Detail() string {
	return e.Reason + "; " + e.Fix
}

// Recorder keeps the durable records of started processes
// (*sqlite.DB is one).
type Recorder interface {
	RecordProcess(ctx context.Context, p store.Process) error
	ForgetProcess(ctx context.Context, id string) error
}

// Config configures a Sandbox. Paths are absolute; the caller (the
// host) expands "~" and resolves them from its own facts, never from
// the environment.
type Config struct {
	// Mode is the sandbox mode; "" means WorkspaceWrite.
	Mode Mode
	// Hide are paths that do not exist inside the sandbox: warden's
	// state directory, its config, sandbox.hide. A directory shows as
	// empty and read-only, a file as empty and read-only. A writable
	// root may not lie inside one.
	Hide []string
	// Writable are extra writable roots (sandbox.writable), in
	// workspace-write mode.
	Writable []string
	// Network: true shares the host's network; false gives each call
	// its own network namespace with only a loopback interface.
	Network bool
	// Home is the user's home directory. A call's workspace may not be
	// it or hold it (every shell start-up file would be writable);
	// configured writable roots may, and then its start-up files are
	// kept read-only.
	Home string
	// TempRoot holds the calls' private temporary directories (created
	// 0700). It must be hidden (the host puts it in the state
	// directory), so no call sees another's.
	TempRoot string
	// Executable is the binary re-executed as the helper; "" means this
	// process's own (/proc/self/exe on Linux).
	Executable string
	// Recorder, if set, records each process before it runs.
	Recorder Recorder
	// Spawner names this process in the records (the host id).
	Spawner string
	// Probe replaces the kernel probe New runs; tests use it to
	// simulate a kernel that cannot sandbox. nil means the real probe:
	// a sandboxed run of the helper itself.
	Probe func(ctx context.Context) error
	// Logger hears about calls that could not be cleaned up.
	Logger *slog.Logger
}

// Sandbox starts sandboxed processes. It is safe for concurrent use.
type Sandbox struct {
	cfg    Config
	log    *slog.Logger
	status Status
	// unavailable is set when the kernel cannot sandbox (and the mode
	// is not off): every Command fails with it.
	unavailable *UnavailableError
	self        procID
	// exe is this binary's path: shown read-only to every call (warden
	// workers and tools run it; it may live under /tmp after go run).
	exe string

	mu     sync.Mutex
	live   map[string]*Cmd
	fenced map[string]time.Time
	n      uint64
}

// Status is what is in force, for `warden doctor`, serve's banner and
// the console.
type Status struct {
	// Mode is the configured mode.
	Mode Mode `json:"mode"`
	// Active reports whether commands run sandboxed.
	Active bool `json:"active"`
	// Refusing reports whether every command is refused (the kernel
	// cannot sandbox and the mode is not off).
	Refusing bool `json:"refusing"`
	// Why explains Active and Refusing in one sentence.
	Why string `json:"why"`
	// Fix, when Refusing, says what to change.
	Fix string `json:"fix,omitempty"`
	// Kernel is what the kernel offers.
	Kernel Kernel `json:"kernel"`
	// Hide, Writable and Network are the configured view.
	Hide     []string `json:"hide"`
	Writable []string `json:"writable"`
	Network  bool     `json:"network"`
}

// Kernel is what the running kernel offers for sandboxing.
type Kernel struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// UserNamespaces says whether unprivileged user namespaces look
	// enabled (sysctls), with the values read.
	UserNamespaces string `json:"user_namespaces"`
	// LandlockABI is the Landlock ABI version (0: none).
	LandlockABI int `json:"landlock_abi"`
	// MountSetattr says whether mount_setattr(2) is available.
	MountSetattr bool `json:"mount_setattr"`
}

// New returns a Sandbox. Unless the mode is off it probes the kernel by
// running the helper in a real sandbox; if that fails, the Sandbox is
// still returned, and every Command fails closed with an
// *UnavailableError (Status says why). An error is returned only for a
// bad Config.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	if cfg.Mode == "" {
		cfg.Mode = WorkspaceWrite
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, fmt.Errorf("new sandbox: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TempRoot == "" || !filepath.IsAbs(cfg.TempRoot) {
		return nil, fmt.Errorf("new sandbox: temporary root %q: want an absolute path", cfg.TempRoot)
	}
	if err := os.MkdirAll(cfg.TempRoot, 0o700); err != nil {
		return nil, fmt.Errorf("new sandbox: %w", err)
	}
	if err := os.Chmod(cfg.TempRoot, 0o700); err != nil {
		return nil, fmt.Errorf("new sandbox: %w", err)
	}
	var err error
	if cfg.Hide, err = cleanAll(cfg.Hide, false); err != nil {
		return nil, fmt.Errorf("new sandbox: hide: %w", err)
	}
	if !covered(cfg.TempRoot, cfg.Hide) {
		cfg.Hide = append(cfg.Hide, cfg.TempRoot)
	}
	if cfg.Writable, err = cleanAll(cfg.Writable, true); err != nil {
		return nil, fmt.Errorf("new sandbox: writable: %w", err)
	}
	for _, w := range cfg.Writable {
		if h, in := inside(w, cfg.Hide); in {
			return nil, fmt.Errorf("new sandbox: writable root %s lies inside the hidden path %s", w, h)
		}
		if w == "/" {
			return nil, errors.New("new sandbox: writable root /: that is the whole file system")
		}
	}
	if cfg.Executable == "" {
		cfg.Executable = selfExe()
	}
	s := &Sandbox{cfg: cfg, log: cfg.Logger.With("component", "sandbox"), live: map[string]*Cmd{}, fenced: map[string]time.Time{}}
	s.self, _ = self()
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			s.exe = exe
		}
	}
	s.status = Status{Mode: cfg.Mode, Kernel: kernelFacts(), Hide: cfg.Hide, Writable: cfg.Writable, Network: cfg.Network}
	if cfg.Mode == Off {
		s.status.Why = "sandbox.mode is off in the config: commands run unconfined, as the host's user"
		return s, nil
	}
	probe := cfg.Probe
	if probe == nil {
		probe = s.probe
	}
	if err := probe(ctx); err != nil {
		s.unavailable = unavailable(err, s.status.Kernel)
		s.status.Refusing = true
		s.status.Why = "the kernel could not start a sandbox: " + s.unavailable.Reason
		s.status.Fix = s.unavailable.Fix
		return s, nil
	}
	s.status.Active = true
	s.status.Why = fmt.Sprintf("sandbox.mode %s; a test run of the sandbox succeeded", cfg.Mode)
	return s, nil
}

// Status reports what is in force.
func (s *Sandbox) Status() Status { return s.status }

// Mode is the mode label the audit records carry: the configured mode,
// or "off".
func (s *Sandbox) Mode() Mode { return s.cfg.Mode }

// Label is what audit records say about the sandbox commands run in:
// the mode, "off", "unavailable" (nothing runs) or "none" (no sandbox).
func Label(s *Sandbox) string {
	switch {
	case s == nil:
		return "none"
	case s.unavailable != nil:
		return "unavailable"
	}
	return string(s.cfg.Mode)
}

// Err is the error every Command returns when the kernel cannot
// sandbox, or nil.
func (s *Sandbox) Err() error {
	if s.unavailable != nil {
		return s.unavailable
	}
	return nil
}

// cleanAll cleans absolute paths, resolving symlinks of existing ones
// (mustExist: a missing one is an error, else it is kept as given).
func cleanAll(paths []string, mustExist bool) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%q: want an absolute path", p)
		}
		p = filepath.Clean(p)
		r, err := filepath.EvalSymlinks(p)
		switch {
		case err == nil:
			p = r
		case mustExist:
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// within reports whether p is dir or lies inside it (clean, absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// inside returns the first of dirs that holds p.
func inside(p string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if within(p, d) {
			return d, true
		}
	}
	return "", false
}

func covered(p string, dirs []string) bool {
	_, ok := inside(p, dirs)
	return ok
}

// Spec is one process to start.
type Spec struct {
	// Path is the program: absolute, or a name looked up in Env's PATH
	// inside the sandbox.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env is the complete environment (from execenv.Build); TMPDIR is
	// set to the private temporary directory.
	Env []string
	// Dir is the working directory; "" means the host's.
	Dir string
	// Workspace is the writable root of this call (workspace-write);
	// "" means Dir. It may not be "/", the home directory or one of its
	// ancestors, nor lie inside a hidden path.
	Workspace string
	// Stdin, Stdout and Stderr are as in os/exec; nil means the null
	// device.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// ExtraFiles are passed as file descriptors 3, 4, …
	ExtraFiles []*os.File
	// Expose are host paths shown read-only even where hidden (a
	// worker's socket inside the state directory).
	Expose []string
	// Owner and Run label the record: the owner's notation, and the
	// run that Fence and KillRun group processes by ("cron:RUN",
	// "kanban:RUN"); both may be "".
	Owner, Run string
	// WaitDelay bounds how long Wait waits for output after the process
	// ended or was killed; zero means 2 seconds.
	WaitDelay time.Duration
	// noWorkspace runs without a workspace, and arg0 replaces the
	// program's name in its arguments (the probe).
	noWorkspace bool
	arg0        string
}

type workspaceKey struct{}

// WithWorkspace returns ctx carrying the workspace of the calls made
// under it: the directory the caller asked to run in, which stays the
// writable root even when a session's shell has moved elsewhere with
// cd. The runner sets it; Terminal reads it.
func WithWorkspace(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, workspaceKey{}, dir)
}

// WorkspaceFrom returns the workspace set by WithWorkspace, or "".
func WorkspaceFrom(ctx context.Context) string {
	dir, _ := ctx.Value(workspaceKey{}).(string)
	return dir
}

// ExitError is a process that ended other than with status 0.
type ExitError struct {
	// Code is the exit status, or -1 when Signal is set.
	Code int
	// Signal is the signal that killed it, or 0.
	Signal int
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return fmt.Sprintf("killed by signal %d", e.Signal)
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// ShellCode is the status as a shell reports it: the code, or 128 plus
// the signal.
func (e *ExitError) ShellCode() int {
	if e.Signal != 0 {
		return 128 + e.Signal
	}
	return e.Code
}
