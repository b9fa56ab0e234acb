package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/dispatch"
)

// newWorkerCmd builds "warden worker --task ID", which the host's
// dispatcher spawns for one task run; it needs the token on fd 3
// (dispatch.TokenFD) and the worker socket in dispatch.SocketEnv.
func newWorkerCmd() *cobra.Command {
	var task string
	cmd := &cobra.Command{
		Use: "worker --task ID", Short: "Run one kanban task run (spawned by the host)",
		Hidden: true, Args: cobra.NoArgs, DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			socket := os.Getenv(dispatch.SocketEnv) // the edge: set by the dispatcher, nothing else
			if task == "" || socket == "" {
				return usageError{fmt.Errorf("warden worker needs --task and %s; it is started by the host's dispatcher", dispatch.SocketEnv)}
			}
			return dispatch.RunWorker(cmd.Context(), dispatch.WorkerParams{Task: task,
				Token: os.NewFile(dispatch.TokenFD, "warden-worker-token"), Socket: socket, Out: cmd.OutOrStdout()})
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "task id")
	return cmd
}
