// Package cli is warden's command tree. cmd/warden only builds a signal
// context and calls Main, so every command runs in-process under tests
// (testscript) exactly as it does for a user.
//
// Adding a command is one line in newRootCmd: root.AddCommand(newXCmd(…)).
// Each command is newXCmd (cobra wiring and flags only) plus runX (plain Go).
// Commands read and write through cmd.InOrStdin / OutOrStdout / ErrOrStderr,
// never through package-level variables, and report outcomes as errors that
// the exit-code table in exit.go maps to a status: cobra's own errors (bad
// flags, arguments, unknown commands) are usage errors automatically; a
// runX returns usageError for a mistake it finds itself, exitStatus for an
// outcome that is not a failure (a verdict), and any other error for a
// failure.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Main runs warden with args (without the program name) and returns the
// process exit status. It never calls os.Exit, so tests can run it
// in-process.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)

	// Cobra reports bad flags, bad arguments and unknown commands as plain
	// errors before any RunE starts. Recording whether a RunE started lets
	// the exit-code table tell those usage errors from failures without
	// every command having to wrap cobra's messages.
	started := false
	markStart(root, &started)

	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !started {
		err = usageError{err}
	}
	return report(cmd, err, stderr)
}

// newRootCmd builds the command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "warden",
		Short: "An execution host for AI agents: every action passes one gate",
		Long: `warden runs AI agents and puts every action they take — shell commands,
code, file writes, tool calls — through one gate that decides allow, deny or
ask.

` + exitStatusGeneral,
		Version: version(),
		// Root is runnable only to report a missing command; its usage
		// line should not suggest "warden [flags]" does something.
		DisableFlagsInUseLine: true,
		SilenceUsage:          true, // a failing command should not bury its error under usage text
		SilenceErrors:         true, // Main prints errors once, in one format
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A bare "warden" is a usage error, but the list of commands
			// is what the user needs to see.
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usageError{errors.New("missing command")}
		},
	}
	addLogFlags(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkLogFlags(cmd) }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(
		newCheckCmd(),
		newConfigCmd(),
		newServeCmd(),
		newChatCmd(),
		newExecCmd(),
		newApprovalsCmd(),
		newGrantsCmd(),
		newConsoleCmd(),
		newTokenCmd(),
		newSessionsCmd(),
		newAuditCmd(),
		newCronCmd(),
		newKanbanCmd(),
		newWorkerCmd(),
		newHookCmd(),
		newImportCmd(),
		newMCPCmd(),
		newManCmd(),
		newServiceCmd(),
	)
	return root
}

// markStart wraps the RunE of cmd and all its descendants so that *started
// is set once cobra has finished parsing and validating and hands over to
// the command itself.
func markStart(cmd *cobra.Command, started *bool) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			*started = true
			return run(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markStart(sub, started)
	}
}

// version reports the module version the binary was built from, or
// "(devel)" for a build inside the repository.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// report prints err (if it deserves printing) and returns the exit status.
func report(cmd *cobra.Command, err error, stderr io.Writer) int {
	code := exitCode(err)
	switch {
	case err == nil:
	case code == ExitInterrupted:
		fmt.Fprintln(stderr, "warden: interrupted")
	case isExitStatus(err):
		// A verdict: the command already printed its report.
	case code == ExitUsage:
		fmt.Fprintf(stderr, "warden: %v\n", err)
		if cmd != nil {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	default:
		fmt.Fprintf(stderr, "warden: %v\n", err)
	}
	return code
}

func isExitStatus(err error) bool {
	_, ok := errors.AsType[exitStatus](err)
	return ok
}
