package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/ancestry"
)

// Nested runs processes as children of a process that is itself inside
// a warden sandbox — a kanban worker the dispatcher started with
// Sandbox.Command — so they share its confinement (its view, its PID
// namespace, its run's fence) without a sandbox of their own. It makes
// the caller the subreaper of its descendants: what a call detaches
// (setsid, a double fork, nohup) is re-parented to it and killed when
// the call ends, as a sandboxed call's leftovers die with it. A process
// uses one Nested, one call at a time, and starts no other children.
type Nested struct{}

// NewNested prepares this process to run nested calls.
func NewNested() (*Nested, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("nested calls: become the subreaper: %w", err)
	}
	return &Nested{}, nil
}

// Run runs path with args in dir with exactly env (never this
// process's), its output to w, until it exits or ctx ends; then it
// kills what the call left running and returns: nil, an *ExitError, or
// why it did not run to an exit.
func (n *Nested) Run(ctx context.Context, path string, args []string, dir string, env []string, w io.Writer) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(w, pr)
		pr.Close()
	}()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, append([]string{}, env...), pw, pw
	err = cmd.Run()
	// Leftovers first: one holding the output open would keep the copy
	// from ending.
	kerr := killDescendants()
	pw.Close()
	<-copied
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("nested call: %w", context.Cause(ctx))
	case kerr != nil:
		return kerr
	case err == nil:
		return nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &ExitError{Code: -1, Signal: int(ws.Signal())}
		}
		return &ExitError{Code: exit.ExitCode()}
	}
	return fmt.Errorf("nested call: %w", err)
}

// killDescendants kills and reaps every descendant of this process.
func killDescendants() error {
	self := os.Getpid()
	fs := ancestry.FS{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			if in, err := fs.Within(pid, self); err == nil && in {
				left = append(left, pid)
			}
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Reap what died: re-parented orphans are this process's
		// children now.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nested call: leftover processes %v would not die", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
