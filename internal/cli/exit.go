package cli

import (
	"context"
	"errors"
	"strconv"
)

// Exit statuses. This is the one table: every command maps its outcome to
// one of these through exitCode, and exitStatusHelp documents it in --help
// (keep both and README.md in step).
const (
	// ExitSafe: the command is safe, or a command with no verdict of its
	// own (such as check --jsonl) finished.
	ExitSafe = 0
	// ExitDangerous: the command needs approval.
	ExitDangerous = 1
	// ExitBlocked: the gate would block it (hardline, malformed, denied),
	// or warden could not finish (unreadable config, I/O error). Failing
	// with the "blocked" status keeps scripts that branch on it fail closed.
	ExitBlocked = 2
	// ExitUsage: bad flags or arguments, missing command.
	ExitUsage = 3
	// ExitInterrupted: SIGINT or SIGTERM, as a shell reports it.
	ExitInterrupted = 130
)

// exitStatusHelp is the exit-status table as shown in --help.
const exitStatusHelp = `Exit status:
  0    safe (and a finished --jsonl or --catalogue run)
  1    dangerous: needs approval
  2    hardline, malformed or denied: blocked; also any failure such as an
       unreadable --config or an I/O error (fail closed)
  3    usage error: bad flag or argument, missing command
  130  interrupted`

// exitStatus is an outcome that is not a failure, such as a verdict: Main
// exits with it and prints nothing.
type exitStatus int

func (s exitStatus) Error() string { return "exit status " + strconv.Itoa(int(s)) }

// usageError marks the caller's mistake (exit 3).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode maps the error a command returned to the process exit status.
func exitCode(err error) int {
	if err == nil {
		return ExitSafe
	}
	if s, ok := errors.AsType[exitStatus](err); ok {
		return int(s)
	}
	if _, ok := errors.AsType[usageError](err); ok {
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitBlocked
}

// verdictExit maps a verdict to its exit status. Anything unknown is
// treated as blocked, so a new verdict can never exit 0 by accident.
func verdictExit(verdict string) int {
	switch verdict {
	case "safe":
		return ExitSafe
	case "dangerous":
		return ExitDangerous
	default:
		return ExitBlocked
	}
}
