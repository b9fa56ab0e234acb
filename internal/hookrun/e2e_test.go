package hookrun_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/hookrun"
)

// binaries are warden, warden-hook and a trivial program, built once per
// test binary the way the release builds them, into one directory (as
// installed: warden-hook finds warden beside it).
type binaries struct{ dir, warden, hook, trivial string }

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

// TestMain removes the binaries built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func build(t testing.TB) binaries {
	t.Helper()
	if testing.Short() {
		t.Skip("builds warden and warden-hook")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-hook-test")
		if err != nil {
			buildErr = err
			return
		}
		built = binaries{dir: dir, warden: filepath.Join(dir, "warden"), hook: filepath.Join(dir, "warden-hook"), trivial: filepath.Join(dir, "trivial")}
		for out, pkg := range map[string]string{built.warden: "./cmd/warden", built.hook: "./cmd/warden-hook", built.trivial: "./internal/hookrun/testdata/trivial"} {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // the go tool needs its own environment (GOPATH, GOCACHE, …)
			if b, err := cmd.CombinedOutput(); err != nil {
				buildErr = errors.New("go build " + pkg + ": " + err.Error() + "\n" + string(b))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// env is the environment of the test's warden processes, built rather
// than inherited.
func env(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "WARDEN_STATE=" + filepath.Join(home, "state")}
}

// serve starts a host on state and returns when its socket answers.
func serve(t testing.TB, b binaries, home string) {
	t.Helper()
	state := filepath.Join(home, "state")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, b.warden, "serve", "--state", state, "--addr", "127.0.0.1:0", "--scratch", t.TempDir())
	cmd.Env = env(home)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	sock := filepath.Join(state, "warden.sock")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host did not start:\n%s", log.String())
		}
	}
}

// result is what a hook process said.
type result struct {
	stdout string
	exit   int
	cpu    time.Duration // user + system time (not compared)
}

func run(t testing.TB, home string, payload string, argv ...string) result {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env(home)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return result{stdout: out.String(), cpu: cpu}
	case errors.As(err, &ee):
		return result{stdout: out.String(), exit: ee.ExitCode(), cpu: cpu}
	}
	t.Fatalf("%v: %v\n%s", argv, err, errb.String())
	return result{}
}

func claude(tool, input string) string {
	return `{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"toolu_1"}`
}

// waits checks that the hook process is waiting for a human on the
// host's console, then ends it.
func waits(t *testing.T, home, payload string, argv []string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env(home)
	cmd.Stdin = strings.NewReader(payload)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if !strings.Contains(line, "waiting for approval of request") {
		t.Errorf("the hook did not wait on the console: %q, %v", line, err)
	}
}

// TestHookBinaryAnswersAsWarden: for the same calls, warden-hook and
// `warden hook` give the same answer and exit status, with a host
// running (the host decides) and without (warden-hook hands the call to
// warden beside it) — including what is denied, what is read of a
// secret, and what cannot be read.
func TestHookBinaryAnswersAsWarden(t *testing.T) {
	b := build(t)
	home := t.TempDir()
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	calls := map[string]string{
		"safe":      claude("Bash", `{"command":"ls -la"}`),
		"hardline":  claude("Bash", `{"command":"rm -rf --no-preserve-root /"}`),
		"floor":     claude("Bash", `{"command":"cat `+filepath.Join(home, "state", "warden.db")+`"}`),
		"read-key":  claude("Read", `{"file_path":"`+secret+`"}`),
		"glob-aws":  claude("Glob", `{"pattern":"~/.aws/*"}`),
		"read-ok":   claude("Read", `{"file_path":"/tmp/notes.txt"}`),
		"webfetch":  claude("WebFetch", `{"url":"https://example.com"}`),
		"malformed": `{"tool_name":`,
	}
	noHostOnly := map[string]string{
		// With a host these would wait for a human on the console.
		"dangerous": claude("Bash", `{"command":"git push --force origin main"}`),
		"write":     claude("Write", `{"file_path":"`+filepath.Join(home, ".bashrc")+`","content":"x"}`),
	}
	// The hook finds its state by --state, never by $HOME.
	flags := []string{"--state", filepath.Join(home, "state"), "--config", filepath.Join(home, ".config", "warden", "config.yaml")}
	compare := func(t *testing.T, calls map[string]string) {
		for name, payload := range calls {
			want := run(t, home, payload, append([]string{b.warden, "hook", "claude-code"}, flags...)...)
			got := run(t, home, payload, append([]string{b.hook, "claude-code"}, flags...)...)
			if got.stdout != want.stdout || got.exit != want.exit {
				t.Errorf("%s: warden-hook answered %q (exit %d); warden hook %q (exit %d)", name, got.stdout, got.exit, want.stdout, want.exit)
			}
		}
	}
	t.Run("no-host", func(t *testing.T) {
		all := map[string]string{}
		for k, v := range calls {
			all[k] = v
		}
		for k, v := range noHostOnly {
			all[k] = v
		}
		compare(t, all)
		// The hardline one was denied, not passed: the comparison is of
		// real answers.
		if r := run(t, home, calls["hardline"], append([]string{b.hook, "claude-code"}, flags...)...); !strings.Contains(r.stdout, `"deny"`) {
			t.Errorf("hardline: %q", r.stdout)
		}
	})
	t.Run("host", func(t *testing.T) {
		serve(t, b, home)
		compare(t, calls)
		if r := run(t, home, calls["read-key"], append([]string{b.hook, "claude-code"}, flags...)...); !strings.Contains(r.stdout, `"ask"`) {
			t.Errorf("read of a key: %q", r.stdout)
		}
		// The host decided: a dangerous call waits on its console.
		waits(t, home, noHostOnly["dangerous"], append([]string{b.hook, "claude-code"}, flags...))
	})
	t.Run("usage", func(t *testing.T) {
		for _, argv := range [][]string{{b.hook}, {b.hook, "nope"}, {b.hook, "claude-code", "extra"}, {b.hook, "claude-code", "--bogus"}} {
			if r := run(t, home, "", argv...); r.exit != 2 || r.stdout != "" {
				t.Errorf("%v: exit %d, %q; want exit 2 and nothing on stdout", argv[1:], r.exit, r.stdout)
			}
		}
	})
	t.Run("no-warden-beside", func(t *testing.T) {
		// Without a host and without warden beside it, warden-hook cannot
		// decide: it blocks (exit 2), never lets the call through.
		lone := filepath.Join(t.TempDir(), "warden-hook")
		data, err := os.ReadFile(b.hook)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(lone, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := run(t, home, calls["safe"], lone, "claude-code", "--state", t.TempDir(), "--config", flags[3]); r.exit != 2 || r.stdout != "" {
			t.Errorf("exit %d, %q; want exit 2", r.exit, r.stdout)
		}
	})
}

// BenchmarkHookStart is what a hook adds to every tool call of an agent:
// process start to answer for a safe Bash command, for warden-hook and
// `warden hook` (hookbin-*, wardenhook-*), with a host running and
// without, beside the floor (a Go program that does nothing), warden
// --version, and the host's part alone (roundtrip: the same decision
// asked in-process over the socket), measured in turn in every
// iteration so that all see the same load. Reported: p50 and
// p99 wall time per case, and p50 CPU time of the hook process, in ms. Run without -race:
//
//	go test -run '^$' -bench HookStart -benchtime 200x ./internal/hookrun/
func BenchmarkHookStart(b *testing.B) {
	bin := build(b)
	home := b.TempDir()
	serve(b, bin, home)
	safe := claude("Bash", `{"command":"ls -la"}`)
	host := []string{"claude-code", "--state", filepath.Join(home, "state"), "--config", filepath.Join(home, ".config", "warden", "config.yaml")}
	noHost := []string{"claude-code", "--state", b.TempDir(), "--config", filepath.Join(home, ".config", "warden", "config.yaml")}
	cases := []struct {
		name string
		argv []string
	}{
		{"floor", []string{bin.trivial}},
		{"version", []string{bin.warden, "--version"}},
		{"hookbin-host", append([]string{bin.hook}, host...)},
		{"wardenhook-host", append([]string{bin.warden, "hook"}, host...)},
		{"hookbin-nohost", append([]string{bin.hook}, noHost...)},
		{"wardenhook-nohost", append([]string{bin.warden, "hook"}, noHost...)},
	}
	// The host's part: the same decision asked in-process over the socket.
	client := hookrun.NewClient(filepath.Join(home, "state", hookrun.SocketName))
	defer client.Close()
	cases = append(cases, struct {
		name string
		argv []string
	}{"roundtrip", nil})
	req := hookrun.Request{Agent: "claude-code", Session: "s1", Action: action.NewShell("ls -la")}
	times := make([][]time.Duration, len(cases))
	cpus := make([][]time.Duration, len(cases))
	b.ReportAllocs()
	for b.Loop() {
		for i, c := range cases {
			start := time.Now()
			if c.argv == nil {
				if d, err := client.Decide(context.Background(), req, nil); err != nil || !d.Allowed {
					b.Fatalf("decide: %+v, %v", d, err)
				}
				times[i] = append(times[i], time.Since(start))
				continue
			}
			r := run(b, home, safe, c.argv...)
			times[i] = append(times[i], time.Since(start))
			cpus[i] = append(cpus[i], r.cpu)
			if r.exit != 0 || r.stdout != "" && i > 1 {
				b.Fatalf("%s: exit %d, %q", c.name, r.exit, r.stdout)
			}
		}
	}
	for i, c := range cases {
		ts := times[i]
		slices.Sort(ts)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(ts[len(ts)/2]), c.name+"-p50-ms")
		b.ReportMetric(ms(ts[min(len(ts)-1, len(ts)*99/100)]), c.name+"-p99-ms")
		if c.argv != nil {
			// CPU time of the process (the host's not included): what
			// the machine's load inflates least.
			cs := cpus[i]
			slices.Sort(cs)
			b.ReportMetric(ms(cs[len(cs)/2]), c.name+"-cpu-p50-ms")
		}
	}
}
