// Command warden-hook answers other agents' permission hooks (Claude
// Code, Codex, Gemini CLI) through warden's gate, and starts like a
// small program: it links the socket client, the hook protocols and the
// read judgement, not the host (see internal/hookrun). warden hook
// install points agents at it when it is installed beside warden.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wardenhq/warden/internal/hookrun"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	os.Exit(hookrun.Main(ctx, os.Args[1:], hookrun.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}))
}
