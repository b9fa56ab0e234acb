// Command warden is an execution host for AI agents. All behaviour lives in
// internal/cli so that it can run in-process under tests.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // schedules name time zones; do not depend on the host's zoneinfo

	"github.com/wardenhq/warden/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // after the first signal, a second one kills a stuck process
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
