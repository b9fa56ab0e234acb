package dispatch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/workerapi"
)

// TestMain runs the tests, or, when the dispatcher spawned this test
// binary as `TESTBINARY worker --task ID`, acts as `warden worker`
// (the testscript re-exec trick: no go build, the worker is this code).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(workerMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "remote-worker" {
		os.Exit(remoteWorkerMain(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

// workerMain is `warden worker` plus what the tests observe: it reports
// its environment's names and its argv to stderr (the run's log), checks
// the token it read from TokenFD appears in neither, runs the task with
// RunWorker, and, when its workspace holds a file "probe-token", then
// tries its used token again — for its own task and another — and
// reports what the host said.
func workerMain(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	task := fs.String("task", "", "task id")
	if err := fs.Parse(args); err != nil || *task == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: worker --task ID")
		return 3
	}
	environ := os.Environ()
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		fmt.Fprintf(os.Stderr, "worker-env: %s\n", name)
	}
	fmt.Fprintf(os.Stderr, "worker-argv: %q\n", os.Args[1:])
	fmt.Fprintf(os.Stderr, "worker-environ: %q\n", environ)

	f := os.NewFile(TokenFD, "token")
	b, err := io.ReadAll(io.LimitReader(f, maxToken))
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "read token:", err)
		return 1
	}
	token := strings.TrimSpace(string(b))
	leaked := slices.ContainsFunc(append(environ, os.Args...), func(s string) bool { return token != "" && strings.Contains(s, token) })
	fmt.Fprintf(os.Stderr, "token-in-env-or-argv: %v\n", leaked)

	ctx := context.Background()
	socket := os.Getenv(SocketEnv) // the edge, as `warden worker` reads it
	// Every line the host sends goes to the run's log too: tests check
	// what a worker is told.
	err = RunWorker(ctx, WorkerParams{Task: *task, Token: strings.NewReader(token + "\n"), Socket: socket, Out: os.Stdout, Trace: os.Stderr})

	if _, statErr := os.Stat("probe-token"); statErr == nil {
		for _, probe := range []struct{ name, task string }{{"reuse", *task}, {"other-task", "some-other-task"}} {
			c, derr := workerapi.Dial(ctx, socket)
			if derr != nil {
				fmt.Fprintf(os.Stderr, "probe-%s: dial: %v\n", probe.name, derr)
				continue
			}
			_, herr := c.Hello(ctx, token, probe.task)
			c.Close()
			verdict := "accepted"
			if errors.Is(herr, workerapi.ErrRefused) {
				verdict = "refused"
			}
			fmt.Fprintf(os.Stderr, "probe-%s: %s\n", probe.name, verdict)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// remoteWorkerMain is `warden worker --connect …` on "another machine":
// this test binary, started by a test (not by the dispatcher), with its
// own sandbox. It prints RunWorker's error, if any, to stderr.
func remoteWorkerMain(args []string) int {
	fs := flag.NewFlagSet("remote-worker", flag.ContinueOnError)
	task := fs.String("task", "", "")
	connect := fs.String("connect", "", "")
	pin := fs.String("pin", "", "")
	tokenFile := fs.String("token-file", "", "")
	workspace := fs.String("workspace", "", "")
	state := fs.String("state", "", "")
	if err := fs.Parse(args); err != nil {
		return 3
	}
	sum, err := workerapi.ParsePin(*pin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	tok, err := os.Open(*tokenFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	p := &RemoteParams{Addr: *connect, Pin: sum, Workspace: *workspace, Environ: os.Environ(),
		Sandbox: func(ctx context.Context, network bool) (*sandbox.Sandbox, error) {
			return sandbox.New(ctx, sandbox.Config{Hide: []string{*state, *tokenFile}, Network: network,
				TempRoot: filepath.Join(*state, "sandbox"), Spawner: "remote-worker"})
		}}
	fmt.Fprintf(os.Stderr, "worker-environ: %q\n", os.Environ())
	if err := RunWorker(context.Background(), WorkerParams{Task: *task, Token: tok, Remote: p, Out: os.Stdout, Trace: os.Stderr}); err != nil {
		fmt.Fprintln(os.Stderr, "remote worker:", err)
		return 1
	}
	return 0
}
