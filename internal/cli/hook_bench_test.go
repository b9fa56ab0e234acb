package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
)

// hookSafePayload is a Claude Code PreToolUse payload for a safe Bash
// command.
const hookSafePayload = `{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_bench"}`

// BenchmarkHookClaudeCode measures what `warden hook claude-code` adds to
// every Claude Code tool call: process start to answer for a safe Bash
// command, with no host running (local gate: config, SQLite open, audit
// append) and with a host running (a round trip over the admin socket;
// the host audits). Each iteration execs the warden binary (this test
// binary under testscript's "warden" name) once and checks the answer.
// Reported: median-ms and p90-ms of the wall time per run.
//
// Run without -race:
//
//	go test -run '^$' -bench HookClaudeCode -benchtime 50x ./internal/cli/
func BenchmarkHookClaudeCode(b *testing.B) {
	warden, err := exec.LookPath("warden")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("no-host", func(b *testing.B) {
		benchHook(b, warden, b.TempDir())
	})
	b.Run("host", func(b *testing.B) {
		state := b.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		serve := exec.CommandContext(ctx, warden, "serve", "--state", state, "--addr", "127.0.0.1:0", "--scratch", b.TempDir())
		serve.Env = hookBenchEnv(state)
		serve.Cancel = func() error { return serve.Process.Signal(os.Interrupt) }
		if err := serve.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { cancel(); _ = serve.Wait() }()
		c := localapi.NewClient(filepath.Join(state, localapi.SocketName))
		defer c.Close()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := c.Grants(ctx); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("host did not start")
			}
		}
		benchHook(b, warden, state)
	})
}

// hookBenchEnv is the environment of the benchmark's warden processes,
// built rather than inherited.
func hookBenchEnv(state string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(state), "WARDEN_STATE=" + state}
}

func benchHook(b *testing.B, warden, state string) {
	var times []time.Duration
	for b.Loop() {
		cmd := exec.Command(warden, "hook", "claude-code")
		cmd.Env = hookBenchEnv(state)
		cmd.Stdin = strings.NewReader(hookSafePayload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		times = append(times, time.Since(start))
		// Safe: no decision (Claude Code's own rules apply).
		if err != nil || out.Len() != 0 {
			b.Fatalf("hook: %v, %s", err, out.String())
		}
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "median-ms")
	b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
}
