package cli

import (
	"context"
	"errors"
	"strconv"

	"github.com/wardenhq/warden/internal/gate"
)

// Exit statuses. This is the one table: every command maps its outcome to
// one of these through exitCode, and exitStatusHelp documents it in --help
// (keep both and docs/check.md in step).
const (
	// ExitSafe: the command is safe (with --as: the gate allows it), a
	// config file is valid, or a command with no verdict of its own (such
	// as check --jsonl) finished.
	ExitSafe = 0
	// ExitDangerous: the command needs approval (with --as: the gate
	// would ask a human).
	ExitDangerous = 1
	// ExitRunFailed: warden cron run's run failed or was skipped (the
	// same status as dangerous: "not a clean success", not a failure
	// of warden).
	ExitRunFailed = 1
	// ExitBlocked: the gate would block it (hardline, malformed, denied;
	// with --as: deny), a config file is invalid, or warden could not
	// finish (unreadable config, I/O error). Failing with the "blocked"
	// status keeps scripts that branch on it fail closed.
	ExitBlocked = 2
	// ExitUsage: bad flags or arguments (such as a bad --as OWNER),
	// missing command.
	ExitUsage = 3
	// ExitNotRun: warden exec's command did not run: denied (by the gate
	// or a human), expired, withdrawn, or it could not be started. Shells
	// use 126 for "found but cannot be executed".
	ExitNotRun = 126
	// ExitInterrupted: SIGINT or SIGTERM, as a shell reports it.
	ExitInterrupted = 130
)

// exitStatusGeneral is the root's --help: what statuses mean across
// commands; each command's --help has its own table.
const exitStatusGeneral = `Exit status: each command's --help lists its own. Across commands, 0 is
success, 2 a failure or a refusal (fail closed: a script that treats 2 as
"blocked" stays safe), 3 a usage error and 130 an interruption.`

// exitStatusHelp is warden check's exit-status table as shown in --help.
const exitStatusHelp = `Exit status:
  0    safe (and a finished --jsonl or --catalogue run); check --as: allow;
       config check: the file is valid
  1    dangerous: needs approval; check --as: ask
  2    hardline, malformed or denied: blocked; check --as: deny; config
       check: the file is invalid; also any failure such as an unreadable
       --config or an I/O error (fail closed)
  3    usage error: bad flag or argument, missing command, bad --as OWNER
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

// decisionExit maps a gate decision (warden check --as) to its exit
// status: allow 0, ask 1, deny 2. Anything else is treated as deny.
func decisionExit(v gate.Verdict) int {
	switch v {
	case gate.Allow:
		return ExitSafe
	case gate.Ask:
		return ExitDangerous
	default:
		return ExitBlocked
	}
}
