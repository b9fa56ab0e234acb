package host

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// BenchmarkAPIDecisions is decisions per second through the host's API:
// clients concurrent `warden exec` calls (POST /v1/exec over the admin
// socket, each client its own connection and web session) of a command
// the hardline floor denies, so each call is one gate decision and one
// durable audit record, and nothing runs. "before" is the store with
// group commit off (MaxBatch 1: a transaction and an fsync per record),
// "after" with it on; both run in the same process, on the same disk,
// one after the other for each number of clients. The figure is the
// decisions/s metric.
//
//	go test ./internal/host -run '^$' -bench APIDecisions -benchtime 3s
func BenchmarkAPIDecisions(b *testing.B) {
	for _, clients := range []int{1, 16, 256} {
		for _, mode := range []struct {
			name  string
			batch int
		}{{"before", 1}, {"after", 0}} {
			b.Run(fmt.Sprintf("clients=%d/%s", clients, mode.name), func(b *testing.B) {
				cfg := benchConfig(b)
				cfg.tune = func(o *sqlite.Options) { o.MaxBatch = mode.batch }
				// 256 clients and the benchmark's own: above the default
				// cap of one uid's connections.
				cfg.Limits = connlimit.Limits{MaxConns: 4096, MaxConnsPerClient: 4096}
				th := startBenchHost(b, cfg)
				cs := make([]*localapi.Client, clients)
				for i := range cs {
					cs[i] = localapi.NewClient(filepath.Join(cfg.StateDir, localapi.SocketName))
					defer cs[i].Close()
				}
				dir := b.TempDir()
				exec := func(c *localapi.Client, session string) {
					denied := false
					err := c.Exec(b.Context(), localapi.ExecRequest{Session: session, Command: "rm -rf /", Dir: dir}, func(e localapi.Event) error {
						denied = denied || e.Event == localapi.EventDenied
						return nil
					})
					if err != nil || !denied {
						b.Errorf("exec: %v (denied %v)", err, denied)
					}
				}
				for i, c := range cs { // sessions created outside the timing
					exec(c, "s"+strconv.Itoa(i))
				}
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for i, c := range cs {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							exec(c, "s"+strconv.Itoa(i))
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
				_ = th
			})
		}
	}
}

// BenchmarkPendingFootprint is what 1,000 pending requests cost a host
// process: 1,000 concurrent exec calls of a dangerous command, each
// waiting for a human (a stream each), with the host's resident memory
// (VmRSS, VmHWM) and open file descriptors read from /proc once all are
// pending. The host is this test binary re-run as `bench-serve` (see
// benchServe): `warden serve` itself caps one uid at 256 connections to
// the admin socket, so 1,000 callers from one uid need the caps raised.
// One iteration is one host.
//
//	go test ./internal/host -run '^$' -bench PendingFootprint -benchtime 1x
func BenchmarkPendingFootprint(b *testing.B) {
	const pending = 1000
	for b.Loop() {
		root := b.TempDir()
		state := filepath.Join(root, "state")
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
		p := startProc(b, env, root, filepath.Join(root, "serve.log"), os.Args[0], "bench-serve", root)
		c := localapi.NewClient(filepath.Join(state, localapi.SocketName))
		waitFor(b, "the host to serve", func() bool { _, err := c.Approvals(b.Context()); return err == nil })
		idle := procStatus(b, p.cmd.Process.Pid)

		ctx, cancel := context.WithCancel(b.Context())
		var wg sync.WaitGroup
		for i := range pending {
			cl := localapi.NewClient(filepath.Join(state, localapi.SocketName))
			wg.Go(func() {
				defer cl.Close()
				_ = cl.Exec(ctx, localapi.ExecRequest{Session: "s" + strconv.Itoa(i), Command: "rm -rf build", Dir: root}, func(localapi.Event) error { return nil })
			})
		}
		waitFor(b, "1,000 pending requests", func() bool {
			list, err := c.Approvals(b.Context())
			return err == nil && len(list) == pending
		})
		loaded := procStatus(b, p.cmd.Process.Pid)
		cancel()
		wg.Wait()
		c.Close()
		b.ReportMetric(idle.rssMB, "idle-RSS-MB")
		b.ReportMetric(loaded.rssMB, "RSS-MB")
		b.ReportMetric(loaded.hwmMB, "peak-RSS-MB")
		b.ReportMetric(float64(idle.fds), "idle-fds")
		b.ReportMetric(float64(loaded.fds), "fds")
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			b.Fatal(err)
		}
		p.wait(b, 30*time.Second)
	}
}

// benchServe runs a host on root/state until SIGINT, with the admin
// socket's connection caps raised for BenchmarkPendingFootprint.
func benchServe(root string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := Run(ctx, Config{
		StateDir: filepath.Join(root, "state"), ScratchDir: filepath.Join(root, "scratch"),
		ConfigPath: filepath.Join(root, "config.yaml"), Addr: "127.0.0.1:0",
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root},
		Limits:  connlimit.Limits{MaxConns: 4096, MaxConnsPerClient: 4096},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type footprint struct {
	rssMB, hwmMB float64
	fds          int
}

// procStatus reads a process's resident memory and open descriptors.
func procStatus(b *testing.B, pid int) footprint {
	b.Helper()
	var f footprint
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			f.rssMB = kb / 1024
		case "VmHWM":
			f.hwmMB = kb / 1024
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		b.Fatal(err)
	}
	f.fds = len(fds)
	return f
}

// benchConfig is newConfig for a benchmark: no logs.
func benchConfig(b *testing.B) Config {
	dir := b.TempDir()
	return Config{
		StateDir: filepath.Join(dir, "state"), ScratchDir: filepath.Join(dir, "scratch"),
		ConfigPath: filepath.Join(dir, "config.yaml"), Addr: "127.0.0.1:0",
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
	}
}

// startBenchHost starts a host for a benchmark and stops it at the end.
func startBenchHost(b *testing.B, cfg Config) *host {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := start(ctx, cfg)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	ready := make(chan struct{})
	h.cfg.Ready = func(Info) { close(ready) }
	done := make(chan error, 1)
	go func() { done <- h.serve(ctx) }()
	<-ready
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return h
}
