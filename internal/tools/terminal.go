// Package tools runs what the gate allowed: shell commands for now. The
// runner decides and audits first; tools only execute.
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
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
	// MaxOutput caps the bytes passed on from stdout and stderr together
	// (zero: no cap); the rest is drained and dropped with one marker.
	MaxOutput int
}

// Run runs command in dir and returns its exit code. The whole process
// group is killed when ctx ends or the timeout passes.
func (t Terminal) Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	sh := t.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	return t.exec(ctx, sh, []string{"-c", command}, dir, stdout, stderr)
}

// exec runs program with args under the terminal's rules.
func (t Terminal) exec(ctx context.Context, program string, args []string, dir string, stdout, stderr io.Writer) (int, error) {
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{}, t.Env...) // non-nil: never inherit
	if t.MaxOutput > 0 {
		c := &outputCap{left: t.MaxOutput}
		stdout, stderr = c.wrap(stdout), c.wrap(stderr)
	}
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

// TruncatedMarker ends capped output.
const TruncatedMarker = "\n[warden: output truncated]\n"

// outputCap counts what stdout and stderr pass on together.
type outputCap struct {
	mu     sync.Mutex
	left   int
	marked bool
}

type capWriter struct {
	c *outputCap
	w io.Writer
}

func (c *outputCap) wrap(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return capWriter{c, w}
}

func (cw capWriter) Write(p []byte) (int, error) {
	cw.c.mu.Lock()
	defer cw.c.mu.Unlock()
	n := len(p)
	if cw.c.left <= 0 {
		if !cw.c.marked {
			cw.c.marked = true
			cw.w.Write([]byte(TruncatedMarker))
		}
		return n, nil // drained: the child must not block on a full pipe
	}
	if len(p) > cw.c.left {
		p = p[:cw.c.left]
	}
	cw.c.left -= len(p)
	if _, err := cw.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}
