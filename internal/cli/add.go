package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/localapi"
)

// newAddCmd builds an add verb (cron add, kanban add) from v: build makes
// its request of the arguments (dash is cobra's ArgsLenAtDash, -1
// without "--") before the host is asked, and add sends it. The host's
// refusal of a request as malformed (400) is a usage error, like
// build's.
func newAddCmd[Req, T any](v hostVerb[T], build func(args []string, dash int) (Req, error), add func(*localapi.Client, context.Context, Req) (T, error)) *cobra.Command {
	var req Req
	v.args = cobra.ArbitraryArgs
	v.check = func(cmd *cobra.Command, args []string) (err error) {
		req, err = build(args, cmd.ArgsLenAtDash())
		return err
	}
	v.ask = func(ctx context.Context, c *localapi.Client, _ []string) (T, error) {
		res, err := add(c, ctx, req)
		return res, badRequest(err)
	}
	return newHostVerbCmd(v)
}

// addSyntax is how an add verb (cron add, kanban add) takes its
// arguments: one word (a job's NAME, a task's TITLE) before "--", and
// the steps: each --step flag, then COMMAND after "--". Its fields word
// the usage errors.
type addSyntax struct {
	verb  string // the command line so far: "warden cron add"
	word  string // what stands before "--": "NAME"
	tail  string // the rest of a usage line after word: " -- COMMAND..."
	shown string // the format a first word is shown again in: "%s" or "%q"
	hint  string // said after several words before "--"
}

// parse splits args (dash is cobra's ArgsLenAtDash, -1 without "--")
// into the word and the steps. A prompt (--prompt) may come without
// steps; anything else needs at least one.
func (s addSyntax) parse(args []string, dash int, prompt string, stepFlags []string) (string, []string, error) {
	switch {
	case len(args) == 0 || dash == 0:
		return "", nil, usageError{fmt.Errorf("missing %s (%s %s%s)", s.word, s.verb, s.word, s.tail)}
	case dash < 0 && len(args) > 1:
		return "", nil, usageError{fmt.Errorf("put the command after --: %s "+s.shown+" ... -- %s", s.verb, args[0], strings.Join(args[1:], " "))}
	case dash > 1:
		return "", nil, usageError{fmt.Errorf("one %s before --, got %q%s", s.word, args[:dash], s.hint)}
	}
	word, command := args[0], args[1:]
	if prompt != "" && len(stepFlags) == 0 && len(command) == 0 {
		return word, nil, nil
	}
	steps := append([]string(nil), stepFlags...)
	if len(command) > 0 {
		line, err := joinCommand(command)
		if err != nil {
			return "", nil, usageError{err}
		}
		steps = append(steps, line)
	}
	if len(steps) == 0 {
		return "", nil, usageError{errors.New("no steps: give COMMAND after -- or --step CMD")}
	}
	return word, steps, nil
}
