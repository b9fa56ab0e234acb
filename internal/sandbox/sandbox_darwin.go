package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// sandboxExec is macOS's Seatbelt front end.
const sandboxExec = "/usr/bin/sandbox-exec"

// confine on macOS execs the command under sandbox-exec with the
// profile the host generated (see seatbeltProfile).
func confine(sp spec, _, rep *os.File) int {
	path, err := lookPath(sp.Path, sp.Env, sp.Dir)
	if err == nil && sp.Dir != "" {
		err = os.Chdir(sp.Dir)
	}
	if err == nil {
		args := append([]string{"sandbox-exec", "-p", sp.Profile, "--", path}, sp.Args...)
		err = syscall.Exec(sandboxExec, args, sp.Env)
		if err != nil {
			report(rep, reportError+"setup: exec sandbox-exec: "+err.Error())
			return 125
		}
	}
	report(rep, reportError+err.Error())
	return 127
}

func (s *Sandbox) probe(ctx context.Context) error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return fmt.Errorf("%s: %w", sandboxExec, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := s.Command(Spec{Path: s.cfg.Executable, arg0: probeName, Dir: "/", noWorkspace: true, Env: helperEnv})
	if err != nil {
		return err
	}
	var u *UnavailableError
	if err := c.Run(ctx); errors.As(err, &u) {
		return errors.New(u.Reason)
	} else if err != nil {
		return fmt.Errorf("a test run in the sandbox failed: %w", err)
	}
	return nil
}

func kernelFacts() Kernel { return Kernel{OS: runtime.GOOS} }

func fixFor(string) string {
	return "sandbox-exec must be present (/usr/bin/sandbox-exec); `warden doctor` shows what is in force; as a last resort set `sandbox: {mode: off}` in the config"
}

func unavailable(err error, _ Kernel) *UnavailableError {
	return &UnavailableError{Reason: err.Error(), Fix: fixFor("")}
}
