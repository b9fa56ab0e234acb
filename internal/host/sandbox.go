package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/sandbox"
)

// SandboxDir is where the calls' private temporary directories live,
// in the state directory (hidden from every call).
const SandboxDir = "sandbox"

// SandboxFacts are what a host (or warden chat, or warden doctor)
// knows to build the sandbox its commands run in. Nothing here reads
// the process environment: the CLI passes Environ in.
type SandboxFacts struct {
	StateDir   string
	ConfigPath string
	// Paths are the host facts: the home directory and warden's own
	// files (the config file in use, the default config directory).
	Paths   gate.Paths
	Environ []string
	// Config is the loaded configuration (nil: the defaults).
	Config *config.Config
	// Spawner names this process in the process records; Recorder keeps
	// them (nil: none, as warden doctor).
	Spawner  string
	Recorder sandbox.Recorder
	// Probe replaces the kernel probe (tests).
	Probe  func(context.Context) error
	Logger *slog.Logger
}

// SandboxConfig is the sandbox a host runs commands in: the config's
// sandbox: section, with warden's own state and config, the user's
// runtime directory (systemd, D-Bus and agent sockets) and container
// engine sockets hidden. Paths the config lists that do not exist are
// logged and left out.
func SandboxConfig(f SandboxFacts) sandbox.Config {
	c := f.Config
	if c == nil {
		c = config.Default()
	}
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	home := f.Paths.Home
	hide := []string{f.StateDir}
	if f.ConfigPath != "" {
		hide = append(hide, f.ConfigPath)
	}
	hide = append(hide, f.Paths.Protected...)
	if rt := envValue(f.Environ, "XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		hide = append(hide, rt)
	}
	hide = append(hide, "/run/user/"+strconv.Itoa(os.Getuid()), "/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock")
	for _, h := range c.Sandbox.Hide {
		if p, ok := expandHome(h, home); ok {
			hide = append(hide, p)
		}
	}
	var writable []string
	for _, w := range c.Sandbox.Writable {
		p, ok := expandHome(w, home)
		if !ok {
			log.Warn("sandbox.writable: no home directory to expand it in; left out", "path", w)
			continue
		}
		if _, err := os.Stat(p); err != nil {
			log.Warn("sandbox.writable: left out", "path", p, "err", err)
			continue
		}
		writable = append(writable, p)
	}
	return sandbox.Config{
		Mode: sandbox.Mode(c.Sandbox.Mode), Hide: existing(hide), Writable: writable, Network: c.Sandbox.Network,
		Home: home, TempRoot: filepath.Join(f.StateDir, SandboxDir),
		Recorder: f.Recorder, Spawner: f.Spawner, Probe: f.Probe, Logger: log,
	}
}

// NewSandbox builds and probes the sandbox of SandboxConfig(f).
func NewSandbox(ctx context.Context, f SandboxFacts) (*sandbox.Sandbox, error) {
	return sandbox.New(ctx, SandboxConfig(f))
}

// consoleWorkspace is the console sessions' working directory, given
// the host's (wd): "" (wd itself) unless wd is / or holds the home
// directory, which a sandbox refuses as a writable workspace (a
// service's working directory often is); then SCRATCH/console, created
// 0700.
func consoleWorkspace(wd, scratch, home string) (string, error) {
	if wd != "" {
		if real, err := filepath.EvalSymlinks(wd); err == nil && real != "/" && (home == "" || !within(home, real)) {
			return "", nil
		}
	}
	dir := filepath.Join(scratch, ConsoleDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("console workspace: %w", err)
	}
	return dir, nil
}

// within reports whether p is dir or inside it (both clean, absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// existing keeps the paths that exist or whose parent does (a config
// file that may appear later), without repeats.
func existing(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(filepath.Dir(p)); err != nil {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// expandHome expands a leading "~" with home.
func expandHome(p, home string) (string, bool) {
	switch {
	case p == "~":
		return home, home != ""
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:]), home != ""
	}
	return p, true
}

// envValue is NAME's value in environ.
func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// sandboxLines are serve's banner lines about the sandbox, and whether
// they are a warning.
func sandboxLines(st sandbox.Status) (string, bool) {
	switch {
	case st.Refusing:
		return fmt.Sprintf("UNAVAILABLE, every command is refused: %s\n           fix: %s", st.Why, st.Fix), true
	case st.Mode == sandbox.Off:
		return "OFF (sandbox.mode: off): commands run unconfined, with the host's user's full access; every audit record says sandbox=off", true
	}
	net := "network on"
	if !st.Network {
		net = "network off"
	}
	return fmt.Sprintf("%s, %s, Landlock ABI %d; hidden: %s", st.Mode, net, st.Kernel.LandlockABI, strings.Join(st.Hide, ", ")), false
}

// consoleWarnings are the console's banners about the sandbox.
func consoleWarnings(st sandbox.Status) []string {
	switch {
	case st.Refusing:
		return []string{"The sandbox is unavailable on this host: every command is refused. Run `warden doctor` for why and what to change."}
	case st.Mode == sandbox.Off:
		return []string{"The sandbox is OFF (sandbox.mode: off): commands run unconfined, with full access to this user's files, warden's own included."}
	}
	return nil
}
