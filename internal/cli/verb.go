package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// hostVerb is a command that makes one request of the running host
// ("warden cron rm NAME", "warden grants revoke ID", …) and prints the
// answer: as indented JSON with --json, else for people. Every such
// command is built from one (newHostVerbCmd), so they share --state,
// --json, the order of checking before asking, and hostError's reading
// of a failure. A verb's own flags are added to the built command.
type hostVerb[T any] struct {
	// use is the command's Use line, flags and all (cobra adds none).
	use     string
	short   string
	long    string
	example string
	// args checks the arguments' count; nil is exactly one.
	args cobra.PositionalArgs
	// json is --json's help.
	json string
	// check, if set, refuses bad arguments or flags (a usage error)
	// before the host is asked.
	check func(cmd *cobra.Command, args []string) error
	// ask makes the request with the command's arguments.
	ask func(ctx context.Context, c *localapi.Client, args []string) (T, error)
	// write prints the answer for people.
	write func(w io.Writer, args []string, v T) error
}

// newHostVerbCmd builds the command of v.
func newHostVerbCmd[T any](v hostVerb[T]) *cobra.Command {
	var (
		state  string
		asJSON bool
	)
	args := v.args
	if args == nil {
		args = cobra.ExactArgs(1)
	}
	cmd := &cobra.Command{
		Use:                   v.use,
		Short:                 v.short,
		Long:                  v.long,
		Example:               v.example,
		DisableFlagsInUseLine: true,
		Args:                  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if v.check != nil {
				if err := v.check(cmd, args); err != nil {
					return err
				}
			}
			return runHostVerb(cmd.Context(), v, state, asJSON, args, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &state)
	cmd.Flags().BoolVar(&asJSON, "json", false, v.json)
	return cmd
}

// runHostVerb asks the host and writes its answer.
func runHostVerb[T any](ctx context.Context, v hostVerb[T], state string, asJSON bool, args []string, stdout io.Writer) error {
	res, err := callHost(ctx, state, func(c *localapi.Client) (T, error) { return v.ask(ctx, c, args) })
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, res, true)
	}
	return v.write(stdout, args, res)
}

// writef is fmt.Fprintf for a caller that wants only its error: the
// last line of a command's output.
func writef(w io.Writer, format string, a ...any) error {
	_, err := fmt.Fprintf(w, format, a...)
	return err
}

// optionalArg is the argument of a command that takes at most one, or
// "" without one.
func optionalArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}
