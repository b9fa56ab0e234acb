package shellstate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/tools"
)

// newManager returns a Manager with a minimal environment under t's
// temporary directory.
func newManager(t testing.TB, bash string) *Manager {
	t.Helper()
	m, err := New(Options{
		Dir:      filepath.Join(t.TempDir(), "shellstate"),
		Terminal: tools.Terminal{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}, Sandbox: sandboxtest.New(t)},
		Bash:     bash,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sessionCtx binds a web-session owner with key.
func sessionCtx(t testing.TB, key string) context.Context {
	t.Helper()
	o, err := owner.Gateway("web", key, "")
	if err != nil {
		t.Fatal(err)
	}
	if o, err = o.WithSession(key); err != nil {
		t.Fatal(err)
	}
	return owner.With(context.Background(), o)
}

// inWorkspace makes dir the writable workspace of the calls made with
// ctx (the runner does this with the directory a caller asks for).
func inWorkspace(ctx context.Context, dir string) context.Context {
	return sandbox.WithWorkspace(ctx, dir)
}

// run runs command as ctx's owner and returns stdout; it fails t on a
// non-zero exit.
func run(t testing.TB, m *Manager, ctx context.Context, command string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code, err := m.Run(ctx, command, "", &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("%q: exit %d, err %v, stderr %s", command, code, err, errb.String())
	}
	return out.String()
}

func TestPersistsWithinSessionOnly(t *testing.T) {
	m := newManager(t, "")
	if !m.Bash() {
		t.Skip("no /bin/bash")
	}
	work := t.TempDir()
	a, b := inWorkspace(sessionCtx(t, "a"), work), inWorkspace(sessionCtx(t, "b"), work)
	run(t, m, a, "cd "+work+" && mkdir -p build && cd build")
	run(t, m, a, "export VIRTUAL_ENV=/tmp/venv\ngreet() { echo \"hi $1\"; }\nalias ll='echo listed'")
	got := run(t, m, a, `pwd; echo "$VIRTUAL_ENV"; greet you; ll`)
	want := filepath.Join(work, "build") + "\n/tmp/venv\nhi you\nlisted\n"
	if got != want {
		t.Fatalf("session a: got %q, want %q", got, want)
	}
	got = run(t, m, b, `pwd; echo "v=$VIRTUAL_ENV"; type greet >/dev/null 2>&1 && echo greet; alias ll 2>/dev/null || echo no-alias`)
	if strings.Contains(got, "build") || strings.Contains(got, "/tmp/venv") || strings.Contains(got, "greet") || !strings.Contains(got, "no-alias") {
		t.Fatalf("session b sees a's state: %q", got)
	}
	if err := m.Reset("a"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, m, a, `echo "v=$VIRTUAL_ENV"`); got != "v=\n" {
		t.Fatalf("after reset: %q", got)
	}
	if _, err := os.Stat(m.Path("a")); err != nil {
		t.Fatalf("state file after a call: %v", err)
	}
	fi, err := os.Stat(m.Path("a"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode: %v %v", fi, err)
	}
	if fi, err := os.Stat(m.o.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode: %v %v", fi, err)
	}
}

func TestShFallbackKeepsDirAndVariables(t *testing.T) {
	m := newManager(t, "-")
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	work := t.TempDir()
	a := inWorkspace(sessionCtx(t, "a"), work)
	run(t, m, a, "cd "+work+"; export X='a b'")
	if got := run(t, m, a, `pwd; echo "$X"`); got != work+"\na b\n" {
		t.Fatalf("got %q", got)
	}
}

func TestConcurrentSessionsDoNotInterfere(t *testing.T) {
	m := newManager(t, "")
	const sessions, calls = 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := i % sessions
			ctx := sessionCtx(t, fmt.Sprint("s", s))
			var out bytes.Buffer
			// Each call checks its session's counter is its own, then
			// appends to it.
			cmd := fmt.Sprintf(`case "$OWN" in ""|s%d) ;; *) echo "foreign $OWN"; exit 9;; esac
export OWN=s%d; export N="${N}x"; echo "$N"`, s, s)
			code, err := m.Run(ctx, cmd, "", &out, &out)
			if err != nil || code != 0 {
				errs <- fmt.Errorf("session %d: exit %d, err %v: %s", s, code, err, out.String())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for s := range sessions {
		got := run(t, m, sessionCtx(t, fmt.Sprint("s", s)), `echo "$OWN ${#N}"`)
		if want := fmt.Sprintf("s%d %d\n", s, calls/sessions); got != want {
			t.Errorf("session %d: got %q, want %q (a lost or foreign update)", s, got, want)
		}
	}
}

func TestInjectionRoundTripsAsData(t *testing.T) {
	m := newManager(t, "")
	if !m.Bash() {
		t.Skip("no /bin/bash")
	}
	work := t.TempDir()
	marker := filepath.Join(work, "pwned")
	payloads := []string{
		"x\"\n touch " + marker + " #",
		"$(touch " + marker + ")",
		"`touch " + marker + "`",
		"'; touch " + marker + "; '",
		"\\'\\\"\\\\n\\",
		"\x01\x7f\xff before-nul-would-be\x01",
		"\n\nexport INJ=1\n",
		"${IFS}$((1+1))!!",
	}
	key := "inj"
	ctx := inWorkspace(sessionCtx(t, key), work)
	// Plant the payloads as state directly, as a captured dump would
	// leave them (values, an alias, a function body).
	st := State{Env: map[string]string{}, Aliases: map[string]string{}, Funcs: map[string]string{
		"evil": "evil () { echo ok; }; touch " + marker,      // two statements: rejected
		"good": "good () \n{ \n    echo " + "\"$1\"" + "\n}", // kept
		"x":    "y () { :; }",                                // name mismatch: rejected
	}}
	for i, p := range payloads {
		st.Env[fmt.Sprint("P", i)] = p
	}
	st.Aliases["al"] = "echo '$(touch " + marker + ")'"
	if err := m.save(key, st); err != nil {
		t.Fatal(err)
	}
	// And through the shell itself: values set by a command.
	for i, p := range payloads {
		q, ok := quote(p)
		if !ok {
			t.Fatalf("payload %d not quotable", i)
		}
		run(t, m, ctx, fmt.Sprintf("export Q%d=%s", i, q))
	}
	run(t, m, ctx, "true")
	run(t, m, ctx, "true")
	for i, p := range payloads {
		for _, n := range []string{"P", "Q"} {
			got := run(t, m, ctx, fmt.Sprintf(`printf '%%s' "$%s%d"`, n, i))
			if got != p {
				t.Errorf("%s%d: got %q, want %q", n, i, got, p)
			}
		}
	}
	if got := run(t, m, ctx, "good 'a b'; type evil >/dev/null 2>&1 && echo evil; type y >/dev/null 2>&1 && echo y; true"); got != "a b\n" {
		t.Errorf("functions: %q", got)
	}
	if got := run(t, m, ctx, "al"); got != "$(touch "+marker+")\n" {
		t.Errorf("alias: %q", got)
	}
	if got := run(t, m, ctx, `echo "inj=$INJ"`); got != "inj=\n" {
		t.Errorf("a newline in a value became a command: %q", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("restoring state executed code: marker exists")
	}
	saved, err := m.Load(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := saved.Funcs["evil"]; ok {
		t.Error("a two-statement function was kept")
	}
}

func TestCheckFunc(t *testing.T) {
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"f", "f () \n{ \n    echo hi\n}", true},
		{"f", "f () { echo; }\necho pwned", false},
		{"f", "g () { echo; }", false},
		{"f", "echo pwned", false},
		{"f", "f () { echo; } &", false},
		{"f", "f () { echo; } > /tmp/x", true}, // the redirection is the body's, applied when called
		{"cd", "cd () { :; }", false},
		{"f;x", "f;x () { :; }", false},
	} {
		if _, ok := checkFunc(c.name, c.text); ok != c.ok {
			t.Errorf("checkFunc(%q, %q) = %v, want %v", c.name, c.text, ok, c.ok)
		}
	}
}

// TestHygiene: after calls in a cron run, a kanban run and a web session
// that set session markers, warden's variables, yolo flags and
// credentials, no state file holds a never-persist name, and each
// owner's next call sees only its own values.
func TestHygiene(t *testing.T) {
	m := newManager(t, "")
	cronO, err := owner.Cron("nightly", "42")
	if err != nil {
		t.Fatal(err)
	}
	cronO, _ = cronO.WithSession("cron:nightly:42")
	kanO, err := owner.Kanban("", "T1", "")
	if err != nil {
		t.Fatal(err)
	}
	kanO, _ = kanO.WithSession("kanban:T1")
	owners := map[string]context.Context{
		"cron":   owner.With(context.Background(), cronO),
		"kanban": owner.With(context.Background(), kanO),
		"web":    sessionCtx(t, "web-1"),
	}
	bad := []string{"HERMES_SESSION_KEY", "WARDEN_X", "MY_YOLO", "API_TOKEN", "HERMES_CRON_SESSION",
		"HERMES_EXEC_ASK", "HERMES_INTERACTIVE", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD", "BASH_ENV", "SHLVL"}
	for name, ctx := range owners {
		var b strings.Builder
		for _, n := range bad {
			fmt.Fprintf(&b, "export %s=%s-leak\n", n, name)
		}
		fmt.Fprintf(&b, "export MINE=%s\n", name)
		run(t, m, ctx, b.String())
	}
	ents, err := os.ReadDir(m.o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(owners) {
		t.Fatalf("%d state files, want %d", len(ents), len(owners))
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(m.o.Dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range bad {
			if bytes.Contains(data, []byte(n)) {
				t.Errorf("%s holds %s: %s", e.Name(), n, data)
			}
		}
		var s stateFile
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		for n := range s.Env {
			if execenv.Never(n) {
				t.Errorf("%s holds never-persist %s", e.Name(), n)
			}
		}
	}
	for name, ctx := range owners {
		var q strings.Builder
		q.WriteString(`echo "MINE=$MINE"`)
		for _, n := range bad {
			if n == "SHLVL" {
				continue // the shell sets its own
			}
			fmt.Fprintf(&q, `; [ -n "${%s-}" ] && echo "%s=${%s}"`, n, n, n)
		}
		q.WriteString("; true")
		if got := run(t, m, ctx, q.String()); got != "MINE="+name+"\n" {
			t.Errorf("%s's next call: %q", name, got)
		}
	}
}

// BenchmarkTerminal measures a terminal call with session state (restore
// and save) against the same call through the plain terminal with the
// same shell, in one run, and reports each one's median:
//
//	go test -run '^$' -bench Terminal -benchtime 300x ./internal/shellstate
func BenchmarkTerminal(b *testing.B) {
	m := newManager(b, "")
	work := b.TempDir()
	median := func(b *testing.B, call func() (int, error)) {
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
			if code, err := call(); err != nil || code != 0 {
				b.Fatal(code, err)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), "median-ms")
	}
	b.Run("plain", func(b *testing.B) {
		t := m.o.Terminal
		t.Shell = m.bash
		median(b, func() (int, error) {
			return t.Run(context.Background(), "echo hi >/dev/null", work, nil, nil)
		})
	})
	b.Run("state", func(b *testing.B) {
		ctx := inWorkspace(sessionCtx(b, "bench"), work)
		run(b, m, ctx, "cd "+work+"; export VIRTUAL_ENV=/v A='x y' B=2; f() { echo f; }; g() { echo g; }; alias ll='ls -l'")
		median(b, func() (int, error) {
			return m.Run(ctx, "echo hi >/dev/null", "", nil, nil)
		})
	})
}
