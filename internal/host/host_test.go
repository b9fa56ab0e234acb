package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/dispatch"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/store"
)

// TestMain runs the tests, or, when a host under test spawned this test
// binary as `TESTBINARY worker --task ID` (its Executable is the running
// binary), acts as `warden worker`: the same code the CLI runs.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "worker" && os.Args[2] == "--task" && len(os.Args) == 4 {
		socket := os.Getenv(dispatch.SocketEnv) // the edge, as `warden worker` reads it
		if err := dispatch.Worker(context.Background(), os.Args[3], dispatch.TokenFD, socket); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == "probe-admin" {
		os.Exit(probeAdmin(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "bench-serve" {
		os.Exit(benchServe(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "bench-waiters" {
		os.Exit(benchWaitersServe(os.Args[2]))
	}
	mcptest.MaybeServe() // the story's MCP server: this binary over stdio
	goleak.VerifyTestMain(m)
}

// testHost is a real host on a temp state directory: real SQLite, real
// socket, real web listener on a free loopback port.
type testHost struct {
	*host
	cfg    Config
	client *localapi.Client
	out    *buftest.Buffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// decisions is the host's whole audit log, oldest first.
func (th *testHost) decisions(t testing.TB) []store.Decision {
	t.Helper()
	ds, err := th.st.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// newConfig returns a host config on a fresh state directory, logging to
// the test.
func newConfig(t testing.TB) Config {
	t.Helper()
	dir := t.TempDir()
	return Config{
		StateDir:   filepath.Join(dir, "state"),
		ScratchDir: filepath.Join(dir, "scratch"),
		ConfigPath: filepath.Join(dir, "config.yaml"),
		Addr:       "127.0.0.1:0",
		Environ:    []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		Logger:     slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// configured is newConfig with yaml as the host's config file.
func configured(t testing.TB, yaml string) Config {
	t.Helper()
	cfg := newConfig(t)
	writeConfig(t, cfg, yaml)
	return cfg
}

// writeConfig writes yaml as cfg's config file.
func writeConfig(t testing.TB, cfg Config, yaml string) {
	t.Helper()
	if err := os.WriteFile(cfg.ConfigPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startHost starts a host and stops it when the test ends.
func startHost(t testing.TB, cfg Config) *testHost {
	t.Helper()
	out := &buftest.Buffer{}
	cfg.Stdout = out
	ctx, cancel := context.WithCancel(t.Context())
	h, err := start(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("start host: %v", err)
	}
	th := &testHost{host: h, cfg: cfg, out: out, cancel: cancel, done: make(chan error, 1),
		client: localapi.NewClient(filepath.Join(h.cfg.StateDir, localapi.SocketName))}
	ready := make(chan struct{})
	h.cfg.Ready = func(Info) { close(ready) }
	go func() { th.done <- h.serve(ctx) }()
	<-ready
	t.Cleanup(func() { th.stop(t) })
	return th
}

// stop shuts the host down and waits for it; it may be called again.
func (th *testHost) stop(t testing.TB) {
	t.Helper()
	th.once.Do(func() {
		th.cancel()
		th.client.Close()
		select {
		case th.err = <-th.done:
		case <-time.After(10 * time.Second):
			th.err = errors.New("host did not stop within 10s")
		}
	})
	if th.err != nil {
		t.Error(th.err)
	}
}

// execStream runs an exec request in the background and collects its
// events.
type execStream struct {
	events chan localapi.Event
	done   chan error
}

func startExec(ctx context.Context, c *localapi.Client, req localapi.ExecRequest) *execStream {
	s := &execStream{events: make(chan localapi.Event, 64), done: make(chan error, 1)}
	go func() {
		s.done <- c.Exec(ctx, req, func(e localapi.Event) error { s.events <- e; return nil })
		close(s.events)
	}()
	return s
}

// next returns the next event of the stream, failing after a timeout.
func (s *execStream) next(t *testing.T) localapi.Event {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatal("exec stream ended early")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no exec event within 10s")
	}
	panic("unreachable")
}

// until reads events until one of type kind, returning it and the
// output seen.
func (s *execStream) until(t *testing.T, kind string) (localapi.Event, string) {
	t.Helper()
	var out strings.Builder
	for {
		e := s.next(t)
		if e.Event == localapi.EventStdout || e.Event == localapi.EventStderr {
			out.WriteString(e.Data)
		}
		if e.Event == kind {
			return e, out.String()
		}
		switch e.Event {
		case localapi.EventExit, localapi.EventDenied, localapi.EventError:
			t.Fatalf("exec ended with %+v (output %q) while waiting for %s", e, out.String(), kind)
		}
	}
}

func TestRunStartsAndStops(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	out := th.out.String()
	for _, want := range []string{
		"warden: host " + th.id + " started",
		"state:   " + cfg.StateDir,
		"config:  " + cfg.ConfigPath + " (not found; running with safe defaults",
		"console: http://127.0.0.1:",
		"login:   run `warden console` for a one-time login link",
		"socket:  " + filepath.Join(cfg.StateDir, localapi.SocketName),
		"cron:    0 jobs; steps run in " + filepath.Join(cfg.ScratchDir, CronDir) + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("startup output lacks %q:\n%s", want, out)
		}
	}
	for name, want := range map[string]os.FileMode{".": 0o700, localapi.SocketName: 0o600, DBName: 0o600} {
		fi, err := os.Stat(filepath.Join(cfg.StateDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	if _, err := th.client.Approvals(t.Context()); err != nil {
		t.Fatalf("approvals over the socket: %v", err)
	}
	th.stop(t)
	if _, err := os.Stat(filepath.Join(cfg.StateDir, localapi.SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after shutdown: %v", err)
	}
	if !strings.HasSuffix(th.out.String(), "warden: host stopped\n") {
		t.Errorf("no stop line:\n%s", th.out.String())
	}

	if _, err := os.Stat(filepath.Join(cfg.StateDir, OldTokenName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a token file in the state directory: %v", err)
	}

	// An older warden's admin token file is removed at start, said so,
	// and no longer logs in.
	old := "5f0c" + strings.Repeat("ab", 30)
	if err := os.WriteFile(filepath.Join(cfg.StateDir, OldTokenName), []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	th2 := startHost(t, cfg)
	if out := th2.out.String(); !strings.Contains(out, "removed the admin token file an older warden left") || strings.Contains(out, old) {
		t.Errorf("second start:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir, OldTokenName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old token file is still there: %v", err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, th2.info.ConsoleURL+"pending/list", nil)
	req.Header.Set("Authorization", "Bearer "+old)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token as a bearer: %d, want 401", resp.StatusCode)
	}
}

// apiToken creates an API token over the admin socket, as `warden token
// create` does, and returns its secret.
func (th *testHost) apiToken(t *testing.T, scopes ...string) string {
	t.Helper()
	tok, err := th.client.CreateToken(t.Context(), localapi.TokenRequest{Name: "test", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

func TestRunRefusesASecondHostOnOneStateDir(t *testing.T) {
	cfg := newConfig(t)
	startHost(t, cfg)
	_, err := start(t.Context(), cfg)
	if !errors.Is(err, localapi.ErrInUse) {
		t.Fatalf("second host: %v, want ErrInUse", err)
	}
}

func TestRunRefusesRemoteAddr(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":7878", "192.0.2.1:7878", "example.com:80"} {
		cfg := newConfig(t)
		cfg.Addr = addr
		if err := Run(t.Context(), cfg); !errors.Is(err, ErrRemote) {
			t.Errorf("%s: %v, want ErrRemote", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		if !loopback(addr) {
			t.Errorf("%s is loopback", addr)
		}
	}
}

func TestRunAllowRemote(t *testing.T) {
	cfg := newConfig(t)
	cfg.Addr, cfg.AllowRemote = "0.0.0.0:0", true
	th := startHost(t, cfg)
	if !strings.Contains(th.out.String(), "put TLS (a reverse proxy) in front of it") {
		t.Errorf("no TLS warning:\n%s", th.out.String())
	}
}

func TestRunRefusesABrokenConfig(t *testing.T) {
	cfg := configured(t, "approvals:\n  mode: [\n")
	err := Run(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "warden config check") {
		t.Fatalf("broken config: %v", err)
	}
	// Nothing is left listening.
	if _, err := os.Stat(filepath.Join(cfg.StateDir, localapi.SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestConfigReload: a config that appears is loaded; a broken edit keeps
// the last good policy; a good edit replaces it.
func TestConfigReload(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	mode := func() string { return th.gate.Policy().Mode.String() }
	if mode() != "manual" {
		t.Fatalf("defaults: mode %s", mode())
	}
	write := func(s string) { writeConfig(t, cfg, s) }
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for mode() != want {
			if time.Now().After(deadline) {
				t.Fatalf("mode %s, want %s", mode(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	write("approvals:\n  mode: off\n")
	waitFor("off")
	write("approvals:\n  mode: [\n")
	time.Sleep(2500 * time.Millisecond) // longer than a poll and the racy window
	if mode() != "off" {
		t.Fatalf("a broken edit changed the policy to %s", mode())
	}
	write("approvals:\n  mode: manual\n  timeout: 60\n")
	waitFor("manual")
}

func TestShutdownWithdrawsPendingRequests(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	dir := t.TempDir()
	s := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "s", Command: "rm -rf build", Dir: dir})
	s.until(t, localapi.EventPending)
	th.cancel()
	e := s.next(t)
	if e.Event != localapi.EventDenied || e.State != string(store.Withdrawn) || !strings.Contains(e.Message, "host shutting down") {
		t.Fatalf("after shutdown: %+v", e)
	}
	th.stop(t)
}

func TestExecDisconnectWithdraws(t *testing.T) {
	th := startHost(t, newConfig(t))
	ctx, cancel := context.WithCancel(t.Context())
	s := startExec(ctx, th.client, localapi.ExecRequest{Session: "s", Command: "rm -rf build", Dir: t.TempDir()})
	p, _ := s.until(t, localapi.EventPending)
	cancel()
	<-s.done
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := th.st.GetRequest(t.Context(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == store.Withdrawn {
			if !strings.Contains(r.Reason, "disconnected") {
				t.Errorf("cause %q", r.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("request still %s after the client hung up", r.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCheckAddr(t *testing.T) {
	if err := checkAddr("nonsense", false); err == nil || errors.Is(err, ErrRemote) {
		t.Errorf("bad address: %v", err)
	}
}

// TestExecRefusesAnotherOwnersSession: exec runs as a web session only;
// a key that belongs to a terminal session (or has ended) is refused, so
// exec can never borrow another session's grants or yolo.
func TestExecRefusesAnotherOwnersSession(t *testing.T) {
	th := startHost(t, newConfig(t))
	ctx := t.Context()
	if err := th.st.UpsertSession(ctx, store.SessionRow{Key: "chat-1", OwnerText: "cli,session=chat-1", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	err := th.client.Exec(ctx, localapi.ExecRequest{Session: "chat-1", Command: "true"}, func(localapi.Event) error { return nil })
	if apiErr, ok := errors.AsType[*localapi.APIError](err); !ok || apiErr.Status != 409 || !strings.Contains(apiErr.Error(), "belongs to cli,session=chat-1") {
		t.Fatalf("foreign session: %v", err)
	}
	// A web session that ended is refused too.
	if err := th.client.Exec(ctx, localapi.ExecRequest{Session: "w", Command: "true"}, func(localapi.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := th.st.EndSession(ctx, "w", time.Now()); err != nil {
		t.Fatal(err)
	}
	err = th.client.Exec(ctx, localapi.ExecRequest{Session: "w", Command: "true"}, func(localapi.Event) error { return nil })
	if apiErr, ok := errors.AsType[*localapi.APIError](err); !ok || apiErr.Status != 409 || !strings.Contains(apiErr.Error(), "ended") {
		t.Fatalf("ended session: %v", err)
	}
}
