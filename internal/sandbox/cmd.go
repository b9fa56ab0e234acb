package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// spec is what the host sends the helper on its spec pipe: a 4-byte
// big-endian length, then this as JSON. The pipe stays open for the
// life of the call: its end (EOF) tells the helper the host is gone.
type spec struct {
	// Confine is false in mode off: the helper only execs the command.
	Confine bool   `json:"confine"`
	Path    string `json:"path"`
	// Arg0 is the command's argv[0]; "" means Path.
	Arg0 string   `json:"arg0,omitempty"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Extra is how many extra files the command gets (fds 3…).
	Extra int  `json:"extra"`
	View  view `json:"view"`
	// Network false: the helper brings up loopback in its own network
	// namespace.
	Network bool `json:"network"`
	// UID and GID are the host's ids: the command runs as them.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Profile is the macOS sandbox-exec profile ("" elsewhere).
	Profile string `json:"profile,omitempty"`
}

// maxSpec bounds a spec, both ways.
const maxSpec = 16 << 20

// Report lines, helper to host.
const (
	reportStarted = "started"
	reportError   = "error "
	reportExit    = "exit "
	reportSignal  = "signal "
)

// Cmd is one process started in the sandbox. Use it as an exec.Cmd:
// Start then Wait, or Run.
type Cmd struct {
	s     *Sandbox
	sp    Spec
	id    string
	tmp   string
	view  view
	roots []string

	cmd      *exec.Cmd
	lifeline *os.File
	recorded bool
	pid      int

	// final is the command's status as the helper reported it (nil if
	// it did not: the helper was killed, or mode off).
	final      *ExitError
	reportDone chan struct{}
	waitOnce   sync.Once
	waitErr    error
	done       chan struct{}

	mu     sync.Mutex
	killed bool // Kill was called (before or after the start)
	reaped bool // the process was waited for: its pid may be reused
}

// Command prepares a sandboxed process. It fails closed: with the
// *UnavailableError when the kernel cannot sandbox, with ErrRefused
// when the call cannot be sandboxed as asked, with ErrFenced when its
// run was fenced.
func (s *Sandbox) Command(sp Spec) (*Cmd, error) {
	if s.unavailable != nil {
		return nil, s.unavailable
	}
	if sp.Path == "" {
		return nil, errors.New("sandbox: no program")
	}
	if sp.Env == nil {
		sp.Env = []string{} // never inherit
	}
	if sp.WaitDelay <= 0 {
		sp.WaitDelay = 2 * time.Second
	}
	if sp.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("sandbox: working directory: %w", err)
		}
		sp.Dir = wd
	}
	if sp.Run != "" && s.isFenced(sp.Run) {
		return nil, fmt.Errorf("sandbox: %s: %w", sp.Run, ErrFenced)
	}
	c := &Cmd{s: s, sp: sp, done: make(chan struct{}), reportDone: make(chan struct{})}
	if s.cfg.Mode != Off {
		ws, roots, err := s.roots(sp)
		if err != nil {
			return nil, err
		}
		c.roots = roots
		tmp, err := os.MkdirTemp(s.cfg.TempRoot, "call-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: private temporary directory: %w", err)
		}
		c.tmp = tmp
		empty, err := s.emptyFile()
		if err == nil {
			c.view, err = s.buildView(sp, ws, roots, tmp, empty)
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
	} else {
		tmp, err := os.MkdirTemp(s.cfg.TempRoot, "call-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: private temporary directory: %w", err)
		}
		c.tmp = tmp
	}
	return c, nil
}

// emptyFile returns an empty read-only file under TempRoot (hidden from
// every call) to bind over hidden files.
func (s *Sandbox) emptyFile() (string, error) {
	p := filepath.Join(s.cfg.TempRoot, "empty")
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return p, nil
	}
	s.mu.Lock() // one creator at a time
	defer s.mu.Unlock()
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return p, nil
	}
	_ = os.Remove(p)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o400)
	if errors.Is(err, os.ErrExist) { // another process made it meanwhile
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			return p, nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: empty file: %w", err)
	}
	return p, f.Close()
}

// TempDir is the call's private temporary directory on the host: what
// the command sees as InsideTemp. Write files the command needs there
// before Start.
func (c *Cmd) TempDir() string { return c.tmp }

// InsideTemp is the private temporary directory as the command sees it.
func (c *Cmd) InsideTemp() string {
	if c.s.cfg.Mode == Off || runtime.GOOS != "linux" {
		return c.tmp
	}
	return "/tmp"
}

// SetArgs replaces the arguments before Start (a file in TempDir can
// then be named as the command sees it, under InsideTemp).
func (c *Cmd) SetArgs(args []string) { c.sp.Args = args }

// Pid is the host pid of the process warden started: in a sandbox, the
// helper, init of the call's PID namespace.
func (c *Cmd) Pid() int { return c.pid }

// Start starts the process. The record is written, if the Sandbox has a
// Recorder, after the helper exists and before the command is let run;
// ctx kills the process when it ends.
func (c *Cmd) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			c.cleanup()
		}
	}()
	s := c.s
	if err := s.track(c); err != nil {
		return err
	}
	env := withTemp(c.sp.Env, c.InsideTemp())
	sp := spec{
		Confine: s.cfg.Mode != Off, Path: c.sp.Path, Arg0: c.sp.arg0, Args: c.sp.Args, Env: env, Dir: c.sp.Dir,
		Extra: len(c.sp.ExtraFiles), View: c.view, Network: s.cfg.Network, UID: os.Getuid(), GID: os.Getgid(),
	}
	if sp.Confine && runtime.GOOS == "darwin" {
		sp.Profile = seatbeltProfile(append(c.roots, c.tmp), s.cfg.Hide, protected(c.roots, s.cfg.Home), s.cfg.Network)
	}
	payload, err := json.Marshal(sp)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return fmt.Errorf("sandbox: %w", err)
	}
	cmd := exec.CommandContext(ctx, s.cfg.Executable)
	cmd.Args = []string{helperName, strconv.Itoa(len(c.sp.ExtraFiles))}
	cmd.Env = helperEnv
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.sp.Stdin, c.sp.Stdout, c.sp.Stderr
	cmd.ExtraFiles = append(append([]*os.File{}, c.sp.ExtraFiles...), specR, repW)
	cmd.SysProcAttr = sysProcAttr(sp.Confine, s.cfg.Network)
	cmd.Cancel = func() error { c.Kill(); return nil }
	cmd.WaitDelay = c.sp.WaitDelay
	if err := cmd.Start(); err != nil {
		specR.Close()
		specW.Close()
		repR.Close()
		repW.Close()
		return fmt.Errorf("sandbox: start the helper: %w", err)
	}
	specR.Close()
	repW.Close()
	c.mu.Lock()
	c.cmd, c.lifeline, c.pid = cmd, specW, cmd.Process.Pid
	killed := c.killed
	c.mu.Unlock()
	fail := func(err error) error {
		c.Kill()
		repR.Close()
		_ = cmd.Wait()
		c.markReaped()
		return err
	}
	if killed {
		// Fenced while it was being started.
		return fail(fmt.Errorf("sandbox: %s: %w", c.sp.Run, ErrFenced))
	}
	if err := c.record(ctx); err != nil {
		return fail(err)
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(payload)))
	if _, err := specW.Write(append(hdr[:], payload...)); err != nil {
		return fail(fmt.Errorf("sandbox: hand the helper its spec: %w", err))
	}
	rd := bufio.NewReader(io.LimitReader(repR, maxSpec))
	first, err := rd.ReadString('\n')
	switch {
	case strings.HasPrefix(first, reportError):
		return fail(c.helperError(strings.TrimSpace(strings.TrimPrefix(first, reportError))))
	case first == reportStarted+"\n":
	case errors.Is(err, io.EOF) && first == "" && !sp.Confine:
		// Mode off: the helper exec'd the command, closing the pipe.
	default:
		return fail(c.helperError(fmt.Sprintf("the helper ended before starting the command (%q, %v)", first, err)))
	}
	go func() {
		defer close(c.reportDone)
		defer repR.Close()
		for {
			line, err := rd.ReadString('\n')
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, reportExit); ok {
				n, _ := strconv.Atoi(v)
				c.final = &ExitError{Code: n}
			} else if v, ok := strings.CutPrefix(line, reportSignal); ok {
				n, _ := strconv.Atoi(v)
				c.final = &ExitError{Code: -1, Signal: n}
			}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

// helperError turns what the helper reported into the error callers
// see: a kernel refusal is the Sandbox's unavailability, the rest a
// plain error.
func (c *Cmd) helperError(msg string) error {
	if strings.HasPrefix(msg, "setup: ") {
		return &UnavailableError{Reason: strings.TrimPrefix(msg, "setup: "), Fix: fixFor(msg)}
	}
	return fmt.Errorf("sandbox: %s", msg)
}

// withTemp sets TMPDIR to dir.
func withTemp(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+dir)
}

// record writes the durable record of the started helper.
func (c *Cmd) record(ctx context.Context) error {
	s := c.s
	if s.cfg.Recorder == nil {
		return nil
	}
	start, err := procStart(c.pid)
	if err != nil {
		return fmt.Errorf("sandbox: identify the started process: %w", err)
	}
	// The program only: a command line may hold a secret, and the
	// record is plain text until it is forgotten.
	what := filepath.Base(c.sp.Path)
	p := store.Process{
		ID: c.id, Spawner: s.cfg.Spawner, SpawnerPID: s.self.pid, SpawnerStart: s.self.start, Machine: MachineID(), Boot: s.self.boot,
		PID: c.pid, Start: start, PGID: c.pid, Sandboxed: s.cfg.Mode != Off,
		Owner: c.sp.Owner, Run: c.sp.Run, What: what, TempDir: c.tmp, Started: time.Now().UTC(),
	}
	if err := s.cfg.Recorder.RecordProcess(context.WithoutCancel(ctx), p); err != nil {
		return fmt.Errorf("sandbox: record the started process: %w", err)
	}
	c.recorded = true
	return nil
}

// Wait waits for the process to end and everything it started with it
// (in a sandbox), then forgets its record. It returns nil for status 0,
// an *ExitError for another status, or what went wrong.
func (c *Cmd) Wait() error {
	c.waitOnce.Do(func() {
		if c.cmd == nil {
			c.waitErr = errors.New("sandbox: not started")
			return
		}
		err := c.cmd.Wait()
		<-c.reportDone
		if c.s.cfg.Mode == Off {
			// Whatever stayed in the process group goes with the
			// command (a setsid escapes this: mode off confines nothing).
			// The group outlives its leader's pid only while members
			// remain, so the id cannot name another group yet.
			_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		}
		c.markReaped()
		c.cleanup()
		var exit *exec.ExitError
		switch {
		case c.final != nil && c.final.Code == 0 && c.final.Signal == 0:
			c.waitErr = nil
			if err != nil && !errors.As(err, &exit) {
				c.waitErr = err // the output could not be copied
			}
		case c.final != nil:
			c.waitErr = c.final
		case err == nil:
		case errors.As(err, &exit):
			e := &ExitError{Code: exit.ExitCode()}
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				e.Code, e.Signal = -1, int(ws.Signal())
			}
			c.waitErr = e
		default:
			c.waitErr = err
		}
	})
	return c.waitErr
}

// cleanup forgets the record, closes the lifeline, removes the
// temporary directory and untracks the call; it runs once the process
// is gone (or never started).
func (c *Cmd) cleanup() {
	s := c.s
	if c.lifeline != nil {
		c.lifeline.Close()
	}
	if c.recorded && s.cfg.Recorder != nil {
		if err := s.cfg.Recorder.ForgetProcess(context.Background(), c.id); err != nil {
			s.log.Warn("forget a process record", "id", c.id, "err", err)
		}
	}
	if c.tmp != "" {
		if err := os.RemoveAll(c.tmp); err != nil {
			s.log.Warn("remove a private temporary directory", "dir", c.tmp, "err", err)
		}
	}
	s.untrack(c)
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}

// Run starts the process and waits for it.
func (c *Cmd) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	return c.Wait()
}

// Kill kills the process and, in a sandbox, everything it started (the
// PID namespace dies with its init); in mode off, its process group. A
// Cmd killed before it started never runs its command.
func (c *Cmd) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed = true
	if c.cmd == nil || c.reaped {
		return
	}
	if c.s.cfg.Mode == Off {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	}
	_ = c.cmd.Process.Kill() // a pidfd where the kernel has them
}

func (c *Cmd) markReaped() {
	c.mu.Lock()
	c.reaped = true
	c.mu.Unlock()
}

// Signal sends sig to the command (the helper forwards it).
func (c *Cmd) Signal(sig os.Signal) error {
	if c.cmd == nil || c.cmd.Process == nil {
		return errors.New("sandbox: not started")
	}
	return c.cmd.Process.Signal(sig)
}

// Done is closed once the process is gone and cleaned up.
func (c *Cmd) Done() <-chan struct{} { return c.done }

// track and untrack keep the live calls for KillRun; a call of a
// fenced run is refused.
func (s *Sandbox) track(c *Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, fenced := s.fenced[c.sp.Run]; fenced && c.sp.Run != "" {
		return fmt.Errorf("sandbox: %s: %w", c.sp.Run, ErrFenced)
	}
	s.n++
	if c.id == "" {
		c.id = fmt.Sprintf("%s-%d-%d", s.cfg.Spawner, s.self.pid, s.n)
	}
	s.live[c.id] = c
	return nil
}

func (s *Sandbox) untrack(c *Cmd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, c.id)
}

// fencedTTL is how long a fenced run stays refused: long past any start
// that could have been in flight when it was fenced.
const fencedTTL = time.Hour

func (s *Sandbox) isFenced(run string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.fenced[run]
	return ok
}

// KillRun fences run: nothing more starts for it, every live process of
// it is killed, and KillRun returns once they are all gone (or ctx
// ends). Call it before a run is retried or recorded failed.
func (s *Sandbox) KillRun(ctx context.Context, run string) error {
	if run == "" {
		return nil
	}
	s.mu.Lock()
	now := time.Now()
	for r, at := range s.fenced {
		if now.Sub(at) > fencedTTL {
			delete(s.fenced, r)
		}
	}
	s.fenced[run] = now
	var todo []*Cmd
	for _, c := range s.live {
		if c.sp.Run == run {
			todo = append(todo, c)
		}
	}
	s.mu.Unlock()
	for _, c := range todo {
		c.Kill()
	}
	for _, c := range todo {
		select {
		case <-c.done:
		case <-ctx.Done():
			return fmt.Errorf("sandbox: fence %s: %w", run, context.Cause(ctx))
		}
	}
	return nil
}
