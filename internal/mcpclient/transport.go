package mcpclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/sandbox"
)

// sandboxTransport starts a stdio server in the sandbox and speaks to
// it over its stdin and stdout, as mcp.CommandTransport does for a bare
// process: closing the connection closes the server's stdin, waits for
// it to exit, then sends SIGTERM, then kills it (and everything it
// started: its sandbox dies with it).
type sandboxTransport struct {
	sb   *sandbox.Sandbox
	spec sandbox.Spec
}

// Connect starts the server.
func (t *sandboxTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	sp := t.spec
	sp.Stdin, sp.Stdout = inR, outW
	c, err := t.sb.Command(sp)
	if err == nil {
		// The server lives until the connection closes, not as long as
		// the context of the call that started it.
		err = c.Start(context.WithoutCancel(ctx))
	}
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start mcp server %s: %w", sp.Path, err)
	}
	p := &proc{c: c, stdin: inW, stdout: outR, done: make(chan struct{})}
	go func() { _ = c.Wait(); close(p.done) }()
	return (&mcp.IOTransport{Reader: readOnly{outR}, Writer: p}).Connect(ctx)
}

// proc is the server's stdin; closing it ends the server.
type proc struct {
	c      *sandbox.Cmd
	stdin  *os.File
	stdout *os.File
	done   chan struct{}
}

func (p *proc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes stdin, then waits terminateDuration for the server to
// exit, then sends SIGTERM and waits as long again, then kills it.
func (p *proc) Close() error {
	defer p.stdout.Close()
	err := p.stdin.Close()
	for _, next := range []func(){
		func() { _ = p.c.Signal(syscall.SIGTERM) },
		p.c.Kill,
		func() {},
	} {
		t := time.NewTimer(terminateDuration)
		select {
		case <-p.done:
			t.Stop()
			return err
		case <-t.C:
		}
		next()
	}
	<-p.done
	return err
}

// readOnly closes nothing: the stdout pipe is closed by proc.Close once
// the server is gone, so its last output is still read.
type readOnly struct{ io.Reader }

func (readOnly) Close() error { return nil }
