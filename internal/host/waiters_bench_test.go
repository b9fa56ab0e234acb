package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/localapi"
)

// hostMemory is what a host process reports of its own memory, after a
// forced collection and a return of free memory to the system.
type hostMemory struct {
	// HeapObjects is /memory/classes/heap/objects:bytes (live and
	// not yet swept objects), HeapLive /gc/heap/live:bytes (the live
	// heap the last collection marked), Stacks
	// /memory/classes/heap/stacks:bytes, Total
	// /memory/classes/total:bytes (all the runtime mapped).
	HeapObjects, HeapLive, Stacks, Total uint64
	Goroutines                           uint64
	// RSS is VmRSS from /proc/self/status, in bytes.
	RSS uint64
}

var memorySamples = []string{
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/live:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/sched/goroutines:goroutines",
}

// readMemory collects, returns free memory to the system, and reads
// runtime/metrics.
func readMemory() hostMemory {
	runtime.GC()
	debug.FreeOSMemory()
	s := make([]metrics.Sample, len(memorySamples))
	for i, name := range memorySamples {
		s[i].Name = name
	}
	metrics.Read(s)
	m := hostMemory{
		HeapObjects: s[0].Value.Uint64(), HeapLive: s[1].Value.Uint64(),
		Stacks: s[2].Value.Uint64(), Total: s[3].Value.Uint64(), Goroutines: s[4].Value.Uint64(),
	}
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.SplitSeq(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.RSS = kb << 10
			}
		}
	}
	return m
}

// benchWaitersServe runs a host on root/state until SIGINT (like
// benchServe, with the connection caps lifted above the benchmark's
// callers) and answers commands on stdin, one a line, on stdout:
//
//	m          a JSON hostMemory
//	heap FILE  write a heap profile to FILE, answer "ok"
//	cpu FILE   start a CPU profile into FILE, answer "ok"
//	cpustop    stop it, answer "ok"
func benchWaitersServe(root string) int {
	if os.Getenv("WARDEN_BENCH_MEMPROFILERATE") != "" {
		runtime.MemProfileRate, _ = strconv.Atoi(os.Getenv("WARDEN_BENCH_MEMPROFILERATE"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		in := bufio.NewScanner(os.Stdin)
		enc := json.NewEncoder(os.Stdout)
		var cpu *os.File
		for in.Scan() {
			cmd, arg, _ := strings.Cut(in.Text(), " ")
			switch cmd {
			case "m":
				_ = enc.Encode(readMemory())
				continue
			case "heap":
				if f, err := os.Create(arg); err == nil {
					runtime.GC()
					_ = pprof.WriteHeapProfile(f)
					f.Close()
				}
			case "cpu":
				if f, err := os.Create(arg); err == nil {
					cpu = f
					_ = pprof.StartCPUProfile(f)
				}
			case "cpustop":
				pprof.StopCPUProfile()
				if cpu != nil {
					cpu.Close()
				}
			}
			fmt.Println("ok")
		}
	}()
	err := Run(ctx, Config{
		StateDir: filepath.Join(root, "state"), ScratchDir: filepath.Join(root, "scratch"),
		ConfigPath: filepath.Join(root, "config.yaml"), Addr: "127.0.0.1:0",
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root},
		Limits:  connlimit.Limits{MaxConns: 1 << 20, MaxConnsPerClient: 1 << 20},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// waitersHost is a host process under BenchmarkPendingWaiters.
type waitersHost struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Scanner
}

func (h *waitersHost) command(b *testing.B, line string) string {
	b.Helper()
	if _, err := fmt.Fprintln(h.in, line); err != nil {
		b.Fatal(err)
	}
	if !h.out.Scan() {
		b.Fatalf("host control: %v", h.out.Err())
	}
	return h.out.Text()
}

func (h *waitersHost) memory(b *testing.B) hostMemory {
	b.Helper()
	var m hostMemory
	if err := json.Unmarshal([]byte(h.command(b, "m")), &m); err != nil {
		b.Fatal(err)
	}
	return m
}

// openWaiter opens one pending request the way `warden exec` does (POST
// /v1/exec over the admin socket, a new web session, a command the gate
// asks about) and returns once its pending event arrived, with the
// connection open; the goroutine it leaves reads to the end of the
// stream (the host withdrew the request, or the benchmark closed the
// connection).
func openWaiter(sock, session, dir string) (net.Conn, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(localapi.ExecRequest{Session: session, Command: "rm -rf build", Dir: dir})
	req, _ := http.NewRequest(http.MethodPost, "http://"+localapi.Host+"/v1/exec", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, err
	}
	lines := bufio.NewReader(resp.Body)
	line, err := lines.ReadString('\n')
	if err != nil || !strings.Contains(line, `"pending"`) {
		c.Close()
		return nil, fmt.Errorf("first event %q: %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, lines); resp.Body.Close() }()
	return c, nil
}

// BenchmarkPendingWaiters is what n pending requests cost a host: n
// concurrent `warden exec` calls (raw HTTP over the admin socket, each
// its own connection and web session, at most 256 being opened at
// once) of a command the gate asks a human about, each left waiting
// with its connection open. The host is this test binary re-run as a
// host process (benchWaitersServe), so its memory is its own: it reads
// runtime/metrics after runtime.GC and debug.FreeOSMemory, idle, with
// all n pending, and after the benchmark closed every connection (the
// requests withdrawn) and the host's goroutines went back to idle.
// Metrics: open-s (first dial to last pending event), B/pending (heap
// objects plus goroutine stacks, per request), heap-B/pending,
// stack-B/pending, goroutines/pending, RSS-B/pending (VmRSS, for
// comparison), and after the requests ended: live-heap-over-idle-B,
// heap-over-idle-B and RSS-over-idle-MB. One iteration is one host.
//
//	go test ./internal/host -run '^$' -bench 'PendingWaiters/n=10000' -benchtime 1x
//
// WARDEN_BENCH_PROFILE=DIR writes the host's heap profile with all
// pending (DIR/heap.pprof) and its CPU profile while they open
// (DIR/cpu.pprof).
func BenchmarkPendingWaiters(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			var lim syscall.Rlimit
			if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(n)+256 {
				b.Skipf("open files limit %d is below %d connections", lim.Cur, n)
			}
			for b.Loop() {
				benchWaiters(b, n)
			}
		})
	}
}

func benchWaiters(b *testing.B, n int) {
	root := b.TempDir()
	state := filepath.Join(root, "state")
	cmd := exec.Command(os.Args[0], "bench-waiters", root)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GODEBUG=" + os.Getenv("WARDEN_BENCH_GODEBUG")}
	if os.Getenv("WARDEN_BENCH_PROFILE") != "" {
		cmd.Env = append(cmd.Env, "WARDEN_BENCH_MEMPROFILERATE=4096")
	}
	cmd.Dir = root
	logf, err := os.Create(filepath.Join(root, "serve.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	h := &waitersHost{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	sock := filepath.Join(state, localapi.SocketName)
	c := localapi.NewClient(sock)
	defer c.Close()
	waitFor(b, "the host to serve", func() bool { _, err := c.Approvals(b.Context()); return err == nil })
	// One request opened and withdrawn first: what any first request
	// builds once (prepared statements, compiled rules) is in the idle
	// figure.
	if w, err := openWaiter(sock, "warm", root); err != nil {
		b.Fatal(err)
	} else {
		w.Close()
	}
	waitFor(b, "the warm-up request to end", func() bool { l, err := c.Approvals(b.Context()); return err == nil && len(l) == 0 })
	time.Sleep(200 * time.Millisecond)
	idle := h.memory(b)
	profile := os.Getenv("WARDEN_BENCH_PROFILE")
	if profile != "" {
		h.command(b, "cpu "+filepath.Join(profile, "cpu.pprof"))
	}

	conns := make([]net.Conn, n)
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w, err := openWaiter(sock, "s"+strconv.Itoa(i), root)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			conns[i] = w
		})
	}
	wg.Wait()
	open := time.Since(start)
	if profile != "" {
		h.command(b, "cpustop")
	}
	if firstErr != nil {
		b.Fatalf("open a pending request: %v", firstErr)
	}
	loaded := h.memory(b)
	if profile != "" {
		h.command(b, "heap "+filepath.Join(profile, "heap.pprof"))
	}
	for _, w := range conns {
		w.Close()
	}
	// Every request withdrawn, and the host's goroutines back to idle.
	deadline := time.Now().Add(2 * time.Minute)
	var after hostMemory
	for {
		l, err := c.Approvals(b.Context())
		if err == nil && len(l) == 0 {
			after = h.memory(b)
			if after.Goroutines <= idle.Goroutines+2 {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("after 2 minutes: %d requests pending, %d goroutines (idle %d)", len(l), after.Goroutines, idle.Goroutines)
		}
		time.Sleep(500 * time.Millisecond)
	}
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	b.ReportMetric(open.Seconds(), "open-s")
	b.ReportMetric(per(loaded.HeapObjects+loaded.Stacks, idle.HeapObjects+idle.Stacks), "B/pending")
	b.ReportMetric(per(loaded.HeapObjects, idle.HeapObjects), "heap-B/pending")
	b.ReportMetric(per(loaded.Stacks, idle.Stacks), "stack-B/pending")
	b.ReportMetric(per(loaded.Goroutines, idle.Goroutines), "goroutines/pending")
	b.ReportMetric(per(loaded.RSS, idle.RSS), "RSS-B/pending")
	b.ReportMetric(float64(after.HeapLive)-float64(idle.HeapLive), "live-heap-over-idle-B")
	b.ReportMetric(float64(after.HeapObjects)-float64(idle.HeapObjects), "heap-over-idle-B")
	b.ReportMetric((float64(after.RSS)-float64(idle.RSS))/(1<<20), "RSS-over-idle-MB")
	b.ReportMetric(float64(idle.RSS)/(1<<20), "idle-RSS-MB")
}

// TestPendingMemoryReturns opens n pending requests through the admin
// socket (as BenchmarkPendingWaiters does, in process), hangs up on all
// of them, and checks with runtime/metrics that the host's live heap
// went back near what it was before: a leak of as little as 512 bytes
// per request (a waiter, a context, a timer or a buffer kept) fails it.
// A first round, not counted, builds what any request or session
// builds once.
func TestPendingMemoryReturns(t *testing.T) {
	// Enough requests that the runtime's own growth (an OS thread or
	// two, bounded buffers that filled) stays below the bound.
	const n = 1000
	cfg := newConfig(t)
	cfg.Limits = connlimit.Limits{MaxConns: 4096, MaxConnsPerClient: 4096}
	th := startHost(t, cfg)
	sock := filepath.Join(th.cfg.StateDir, localapi.SocketName)
	dir := t.TempDir()
	// Both rounds use the same n sessions: what a session keeps while
	// it lives (its row, the gate's per-session state) is built in the
	// first; what must go is each request's.
	round := func() {
		conns := make([]net.Conn, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				c, err := openWaiter(sock, fmt.Sprintf("s%d", i), dir)
				if err != nil {
					errs <- err
					return
				}
				conns[i] = c
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("open a pending request: %v", err)
		}
		if l, err := th.client.Approvals(t.Context()); err != nil || len(l) != n {
			t.Fatalf("%d pending (%v), want %d", len(l), err, n)
		}
		for _, c := range conns {
			c.Close()
		}
		waitLong(t, "every request withdrawn", func() bool {
			l, err := th.client.Approvals(t.Context())
			return err == nil && len(l) == 0
		})
	}
	round()
	base := settled(t, 0)
	heapProfile(t, "base")
	round()
	after := settled(t, int(base.Goroutines))
	heapProfile(t, "after")
	if grew := int64(after.HeapLive) - int64(base.HeapLive); grew > n*512 {
		t.Errorf("live heap grew by %d bytes (%d per request) after %d requests ended: before %d, after %d",
			grew, grew/n, n, base.HeapLive, after.HeapLive)
	}
	if after.Goroutines > base.Goroutines+2 {
		t.Errorf("%d goroutines after the requests ended, %d before", after.Goroutines, base.Goroutines)
	}
}

// settled reads the process's memory once its goroutines are back to
// at most want (when want > 0): the handlers and the clients' readers
// of the requests that ended have returned.
func settled(t *testing.T, want int) hostMemory {
	t.Helper()
	if want > 0 {
		waitLong(t, "the requests' goroutines to end", func() bool { return runtime.NumGoroutine() <= want+2 })
	}
	return readMemory()
}

func heapProfile(t *testing.T, name string) {
	if d := os.Getenv("WARDEN_TEST_HEAPDIR"); d != "" {
		f, _ := os.Create(filepath.Join(d, name+".pprof"))
		runtime.GC()
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}

// waitLong is waitFor with room for a loaded machine running the race
// detector: a thousand requests end in turn.
func waitLong(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
