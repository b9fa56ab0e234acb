package cli

import (
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
func resolveStateDir(flag string) (string, error) { return stateDir.resolve(flag) }

// stateDir is where resolveStateDir looks.
var stateDir = dirDefault{
	name: "state directory", flag: "state", env: []string{"WARDEN_STATE"},
	xdg: "XDG_STATE_HOME", xdgSub: "warden", homeSub: ".local/state/warden",
}

// hostClient returns a client for the host serving the state directory.
func hostClient(stateFlag string) (*localapi.Client, error) {
	dir, err := resolveStateDir(stateFlag)
	if err != nil {
		return nil, err
	}
	return localapi.NewClient(filepath.Join(dir, localapi.SocketName)), nil
}
