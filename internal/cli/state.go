package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// The host commands (serve, chat, approvals, grants, exec, audit) share
// one state directory: the store, the admin token and the admin socket.

// stateHelp documents --state for every command that takes it.
const stateHelp = "state directory (default $WARDEN_STATE, else $XDG_STATE_HOME/warden, else ~/.local/state/warden)"

// addStateFlag registers --state on cmd.
func addStateFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "state", "", stateHelp)
}

// resolveStateDir is the one place the state directory is decided: the
// --state flag, else WARDEN_STATE, else $XDG_STATE_HOME/warden (when
// absolute, as the XDG spec requires), else ~/.local/state/warden. The
// CLI is the edge; nothing below it reads the environment.
func resolveStateDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv("WARDEN_STATE")
	}
	if dir == "" {
		if xdg := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(xdg) {
			dir = filepath.Join(xdg, "warden")
		}
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the state directory: %w (give --state, or set WARDEN_STATE, XDG_STATE_HOME or HOME)", err)
		}
		dir = filepath.Join(home, ".local", "state", "warden")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("state directory %s: %w", dir, err)
	}
	return abs, nil
}

// hostClient returns a client for the host serving the state directory.
func hostClient(stateFlag string) (*localapi.Client, error) {
	dir, err := resolveStateDir(stateFlag)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(filepath.Join(dir, localapi.SocketName)), nil
}
