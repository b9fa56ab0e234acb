package cli_test

import (
	"context"
	"errors"
	"flag"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/wardenhq/warden/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the cmp files of testdata/script with the actual output")

func TestMain(m *testing.M) {
	// The chat tests' MCP server is this binary over stdio.
	mcptest.MaybeServe()
	// The test binary doubles as the warden binary: testscript re-executes
	// it under that name, so scripts run the real Main.
	testscript.Main(m, map[string]func(){
		"warden": func() {
			// As cmd/warden does: SIGINT and SIGTERM cancel the context,
			// so "kill -INT" in a script shuts warden serve down cleanly.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
		"mcpclient": mcpClientMain,
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(e *testscript.Env) error {
			// Under -race every exiting process sleeps a second so that
			// late goroutines can report (atexit_sleep_ms=1000); across
			// dozens of warden runs that is most of the test time.
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// The host's workspaces (cron steps, scratch tasks) go to
			// the cache directory, which HOME=/no-home would not give.
			e.Setenv("XDG_CACHE_HOME", e.WorkDir+"/cache")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"waitsock":    cmdWaitSock,
			"waitpending": cmdWaitPending,
			"setjson":     cmdSetJSON,
			"tamper":      cmdTamper,
			"waittask":    cmdWaitTask,
			"browser":     cmdBrowser,
		},
	})
}

// cmdExits is the script command "exits CODE PROG [ARGS...]": like exec,
// but it requires exactly exit status CODE, since warden's exit statuses
// carry the verdict and "! exec" cannot tell 1 from 2 or 3.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits (give the expected status instead)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		ee, ok := errors.AsType[*exec.ExitError](err)
		if !ok {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}
