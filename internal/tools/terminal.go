// Package tools runs what the gate allowed: shell commands for now. The
// runner decides and audits first; tools only execute.
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Terminal runs shell command lines.
type Terminal struct {
	// Shell is the interpreter, "/bin/sh" if empty.
	Shell string
	// Env is the complete child environment (from execenv.Build). It is
	// never nil in a started command: an empty Env means an empty
	// environment, not an inherited one.
	Env []string
	// Timeout bounds one command; zero means none beyond ctx.
	Timeout time.Duration
}

// Run runs command in dir and returns its exit code. The whole process
// group is killed when ctx ends or the timeout passes.
func (t Terminal) Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	sh := t.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	cmd := exec.CommandContext(ctx, sh, "-c", command)
	cmd.Dir = dir
	cmd.Env = append([]string{}, t.Env...) // non-nil: never inherit
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case ctx.Err() != nil:
		return -1, fmt.Errorf("run command: %w", context.Cause(ctx))
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil // as a shell reports it
		}
		return exit.ExitCode(), nil
	}
	return -1, fmt.Errorf("run command: %w", err)
}
