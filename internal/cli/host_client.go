package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// hostExitHelp is the exit-status table of the commands that talk to a
// running host (approvals, grants, audit).
const hostExitHelp = `Exit status:
  0    done
  2    failed: warden is not running (no socket), the host refused, the
       request had already ended (a late answer: "nothing pending — …"),
       or no such id
  3    usage error`

// hostError turns a client error into what the user reads: a host that
// is not running is reported as just that ("warden is not running (no
// socket at …); start it with `warden serve`"), without the operation in
// front of it.
func hostError(err error) error {
	if nr, ok := errors.AsType[*localapi.NotRunningError](err); ok {
		return nr
	}
	return err
}

// callHost opens a client to the host of state, calls f with it and
// closes it; a failure is what hostError makes of it.
func callHost[T any](ctx context.Context, state string, f func(*localapi.Client) (T, error)) (T, error) {
	var zero T
	c, err := hostClient(state)
	if err != nil {
		return zero, err
	}
	defer c.Close()
	v, err := f(c)
	if err != nil {
		return zero, hostError(err)
	}
	return v, nil
}

// badRequest makes the host's refusal of a malformed request (400) a
// usage error; any other error stays as it is.
func badRequest(err error) error {
	if apiErr, ok := errors.AsType[*localapi.APIError](err); ok && apiErr.Status == http.StatusBadRequest {
		return usageError{err}
	}
	return err
}

// parentCmd builds a command that only groups subcommands (subs, and
// any added later): run bare, it is a usage error that lists them.
func parentCmd(use, short, missing string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   use,
		Short:                 short,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usageError{errors.New(missing)}
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// until renders the time left before t, rounded to the second, or "due".
func until(now, t time.Time) string {
	d := t.Sub(now).Round(time.Second)
	if d <= 0 {
		return "due"
	}
	return d.String()
}

// clip shortens s to n runes for a table cell.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// orDash is "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
