package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/dispatch"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/workerapi"
)

// newWorkerCmd builds "warden worker --task ID": spawned by the host's
// dispatcher for one task run, it needs the token on fd 3
// (dispatch.TokenFD) and the worker socket in dispatch.SocketEnv. With
// --connect it is a worker on another machine: the token comes from
// --token-file and the host is reached over TLS, its certificate pinned.
func newWorkerCmd() *cobra.Command {
	var task, connect, pin, tokenFile, workspace, state string
	cmd := &cobra.Command{
		Use:   "worker --task ID [--connect HOST:PORT --pin SHA256 --token-file FILE --workspace DIR]",
		Short: "Run one kanban task run (spawned by the host, or on another machine with --connect)",
		Long: `Run one kanban task run. The host's dispatcher starts "warden worker --task
ID" itself. On another machine, run what "warden kanban remote ID" printed:
the worker connects to the host's worker listener over TLS (refusing any
certificate but the pinned one), presents the one-time token, and runs
the task's steps (or a prompt task's agent loop, whose model calls the
host answers) here, each command in this machine's sandbox with
--workspace as its one writable root, after the host decided it
(docs/workers.md).`,
		Hidden: true, Args: cobra.NoArgs, DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if task == "" {
				return usageError{errors.New("warden worker needs --task")}
			}
			if connect == "" {
				if pin != "" || tokenFile != "" || workspace != "" {
					return usageError{errors.New("--pin, --token-file and --workspace go with --connect")}
				}
				socket := os.Getenv(dispatch.SocketEnv) // the edge: set by the dispatcher, nothing else
				if socket == "" {
					return usageError{fmt.Errorf("warden worker needs %s; it is started by the host's dispatcher (or use --connect)", dispatch.SocketEnv)}
				}
				return dispatch.RunWorker(cmd.Context(), dispatch.WorkerParams{Task: task,
					Token: os.NewFile(dispatch.TokenFD, "warden-worker-token"), Socket: socket, Out: cmd.OutOrStdout()})
			}
			p, err := remoteParams(connect, pin, tokenFile, workspace, state)
			if err != nil {
				return err
			}
			tok, err := os.Open(tokenFile)
			if err != nil {
				return usageError{fmt.Errorf("token file: %w", err)}
			}
			return dispatch.RunWorker(cmd.Context(), dispatch.WorkerParams{Task: task, Token: tok, Remote: p, Out: cmd.OutOrStdout()})
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "task id")
	cmd.Flags().StringVar(&connect, "connect", "", "the host's worker listener, HOST:PORT (a remote worker)")
	cmd.Flags().StringVar(&pin, "pin", "", "the SHA-256 fingerprint of the host's worker certificate")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "the file holding the one-time token")
	cmd.Flags().StringVar(&workspace, "workspace", "", "the directory the steps run in (absolute; their one writable root)")
	cmd.Flags().StringVar(&state, "state", "", "the worker's own directory for its sandbox (default: the user cache directory's warden/worker)")
	return cmd
}

// remoteParams checks a remote worker's flags and builds what it needs;
// the environment and the home directory are read here, at the edge.
func remoteParams(connect, pin, tokenFile, workspace, state string) (*dispatch.RemoteParams, error) {
	if pin == "" || tokenFile == "" || workspace == "" {
		return nil, usageError{errors.New("--connect needs --pin, --token-file and --workspace")}
	}
	sum, err := workerapi.ParsePin(pin)
	if err != nil {
		return nil, usageError{err}
	}
	if !filepath.IsAbs(workspace) {
		return nil, usageError{fmt.Errorf("--workspace %q: want an absolute path", workspace)}
	}
	workspace = filepath.Clean(workspace)
	if fi, err := os.Stat(workspace); err != nil || !fi.IsDir() {
		return nil, usageError{fmt.Errorf("--workspace %s: not a directory", workspace)}
	}
	if state == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, usageError{fmt.Errorf("no --state and no cache directory: %w", err)}
		}
		state = filepath.Join(cache, "warden", "worker")
	}
	if state, err = filepath.Abs(state); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("worker state: %w", err)
	}
	tokAbs, err := filepath.Abs(tokenFile)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	return &dispatch.RemoteParams{
		Addr: connect, Pin: sum, Workspace: workspace, Environ: os.Environ(),
		Sandbox: func(ctx context.Context, network bool) (*sandbox.Sandbox, error) {
			// The steps see neither the worker's directory nor its token.
			return sandbox.New(ctx, sandbox.Config{
				Mode: sandbox.WorkspaceWrite, Hide: []string{state, tokAbs}, Network: network,
				Home: home, TempRoot: filepath.Join(state, "sandbox"), Spawner: "worker",
			})
		},
	}, nil
}
