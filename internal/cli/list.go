package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
	termui "github.com/wardenhq/warden/internal/surface/terminal"
)

// listSpec is one "warden NOUN list" command: what it fetches from the
// running host and how its rows are shown (termui.List). Every list
// command is built from one, so they share --json, --columns, --state
// and their filters' flags.
type listSpec[T any] struct {
	// use is the command's name ("list", or "sessions" under console).
	use   string
	short string
	// long is the help before the common flags' part.
	long  string
	fetch func(*localapi.Client, context.Context) ([]T, error)
	list  termui.List[T]
}

// listFlagsHelp explains the flags every list command has.
const listFlagsHelp = `--columns NAME,… chooses and orders the table's columns (case does not
matter; "-" stands for a space). Filters (when there are any) keep the
rows that match, in the table and in --json alike.

Exit status:
  0    done
  2    warden is not running (no socket), or the host refused
  3    usage error, including an unknown column or a filter value not
       offered`

// newListCmd builds the command of s.
func newListCmd[T any](s listSpec[T]) *cobra.Command {
	var (
		state   string
		q       termui.Query
		columns string
	)
	where := make(map[string]*string, len(s.list.Filters))
	use := []string{s.use, "[--json]", "[--columns NAME,…]"}
	for _, f := range s.list.Filters {
		use = append(use, "[--"+f.Flag+" V]")
	}
	cmd := &cobra.Command{
		Use:                   strings.Join(append(use, "[--state DIR]"), " "),
		Short:                 s.short,
		Long:                  s.long + "\n\n" + listFlagsHelp,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if columns != "" {
				q.Columns = strings.Split(columns, ",")
			}
			q.Where = make(map[string]string, len(where))
			for flag, v := range where {
				q.Where[flag] = *v
			}
			return runList(cmd.Context(), s, state, q, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &state)
	fl := cmd.Flags()
	fl.BoolVar(&q.JSON, "json", false, "print JSON")
	fl.StringVar(&columns, "columns", "", "the table's columns, comma-separated, in order")
	for _, f := range s.list.Filters {
		v := new(string)
		where[f.Flag] = v
		usage := f.Usage
		if f.Choices != nil {
			usage += " (" + strings.Join(f.Choices, ", ") + ")"
		}
		fl.StringVar(v, f.Flag, "", usage)
	}
	return cmd
}

// runList checks the query (a usage error needs no host), fetches the
// rows and writes them.
func runList[T any](ctx context.Context, s listSpec[T], state string, q termui.Query, stdout io.Writer) error {
	if err := s.list.Check(q); err != nil {
		return usageError{err}
	}
	rows, err := callHost(ctx, state, func(c *localapi.Client) ([]T, error) { return s.fetch(c, ctx) })
	if err != nil {
		return err
	}
	return s.list.Write(stdout, rows, q)
}

// yesNoFilter is a filter on a switch of each row: --FLAG yes keeps the
// rows where on is true, --FLAG no the others.
func yesNoFilter[T any](flag, usage string, on func(T) bool) termui.Filter[T] {
	return termui.Filter[T]{Flag: flag, Usage: usage, Choices: []string{"yes", "no"}, Value: func(v T) string { return yesNo(on(v)) }}
}

// yesNo renders a switch in a table.
func yesNo(on bool) string {
	if on {
		return "yes"
	}
	return "no"
}
