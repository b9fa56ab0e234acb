package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hookrun"
	"github.com/wardenhq/warden/internal/protect"
)

// The CLI is the edge: it is the one layer that may ask the process
// where things are (HOME, XDG_CONFIG_HOME). It resolves them here and
// passes plain values down; the gate, policy and config packages never
// look them up.

// defaultConfigPath is where warden's config file lives when no FILE is
// given: $XDG_CONFIG_HOME/warden/config.yaml, or
// ~/.config/warden/config.yaml when XDG_CONFIG_HOME is unset or not an
// absolute path (the XDG spec says to ignore a relative one).
func defaultConfigPath() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "warden", "config.yaml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the config file: %w (give FILE, or set XDG_CONFIG_HOME or HOME)", err)
	}
	return filepath.Join(home, ".config", "warden", "config.yaml"), nil
}

// addConfigFlag registers --config on a command that reads the config
// file from resolveConfigPath.
func addConfigFlag(cmd *cobra.Command, file *string) {
	cmd.Flags().StringVar(file, "config", "", "config file (default $XDG_CONFIG_HOME/warden/config.yaml)")
}

// resolveConfigPath is the config file: flag, else the default.
func resolveConfigPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return defaultConfigPath()
}

// resolveStateAndConfig resolves --state, then --config, for a command
// that opens the host's state itself (chat, doctor).
func resolveStateAndConfig(stateFlag, configFlag string) (state, cfgPath string, err error) {
	if state, err = resolveStateDir(stateFlag); err != nil {
		return "", "", err
	}
	if cfgPath, err = resolveConfigPath(configFlag); err != nil {
		return "", "", err
	}
	return state, cfgPath, nil
}

// hostPaths resolves the host facts gate.Compile needs for a config read
// from configPath ("" for the defaults): the home directory, for "~" in
// write rules, and warden's own files, whose writes are hardline
// (invariant 11): the config file in use and the default config
// directory. A home directory that cannot be found is left empty: "~"
// then stays literal, which can only make a write rule match less, and
// no shell-command decision depends on it.
func hostPaths(configPath string) gate.Paths {
	p := gate.Paths{Homes: protect.LookupHome}
	if home, err := os.UserHomeDir(); err == nil {
		p.Home = home
	}
	if configPath != "" {
		if abs, err := filepath.Abs(configPath); err == nil {
			configPath = abs
		}
		p.Protected = append(p.Protected, configPath)
	}
	if def, err := defaultConfigPath(); err == nil {
		p.Protected = append(p.Protected, filepath.Dir(def))
	}
	return p
}

// resolveScratchDir is where the host keeps its workspaces (cron steps,
// scratch kanban tasks): flag, else $XDG_CACHE_HOME/warden/scratch
// (when absolute), else ~/.cache/warden/scratch. Never inside the state
// directory, where a relative path would reach warden's own files.
func resolveScratchDir(flag string) (string, error) { return scratchDir.resolve(flag) }

// scratchDir is where resolveScratchDir looks.
var scratchDir = dirDefault{
	name: "scratch directory", flag: "scratch",
	xdg: "XDG_CACHE_HOME", xdgSub: "warden/scratch", homeSub: ".cache/warden/scratch",
}

// dirDefault is where one of warden's directories is when its flag is
// not given: the first of env that is set, else xdgSub under the XDG
// base directory xdg when that is absolute (the XDG spec says to ignore
// a relative one), else homeSub under the home directory.
type dirDefault struct {
	name    string   // what it is, in errors: "state directory"
	flag    string   // its flag, without "--"
	env     []string // warden's own variables, read first
	xdg     string   // the XDG base variable: XDG_STATE_HOME
	xdgSub  string   // the directory under the XDG base
	homeSub string   // the directory under the home directory
}

// resolve is the directory, absolute: flag when given, else the default.
func (d dirDefault) resolve(flag string) (string, error) {
	dir := flag
	for _, v := range d.env {
		if dir == "" {
			dir = os.Getenv(v)
		}
	}
	if dir == "" {
		if xdg := os.Getenv(d.xdg); filepath.IsAbs(xdg) {
			dir = filepath.Join(xdg, d.xdgSub)
		}
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			vars := strings.Join(append(slices.Clone(d.env), d.xdg), ", ")
			return "", fmt.Errorf("find the %s: %w (give --%s, or set %s or HOME)", d.name, err, d.flag, vars)
		}
		dir = filepath.Join(home, d.homeSub)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", d.name, dir, err)
	}
	return abs, nil
}

// passwdHome is the invoking user's home directory from the password
// database, looked up by uid: never $HOME, which whoever starts the
// process can set.
func passwdHome() (string, error) { return hookrun.PasswdHome() }

// hookLocations are where warden hook finds its state and config: the
// --state and --config flags on its own command line, else the default
// places under the home directory from the password database. Nothing
// comes from the environment: the hook runs with the environment of
// the agent it judges, whose settings can set XDG_CONFIG_HOME, HOME or
// WARDEN_STATE to point it at a config of the agent's choosing.
func hookLocations(opts hookOptions, home func() (string, error)) (string, string, gate.Paths, error) {
	state, cfgPath, p, err := hookrun.Locations(opts.state, opts.config, home)
	return state, cfgPath, gate.Paths{Home: p.Home, Homes: p.Homes, Protected: p.Protected, FS: p.FS}, err
}
