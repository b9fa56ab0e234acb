package shellstate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/tools"
)

// sessions adapts a Manager to runner.Sessions.
type sessions struct{ m *Manager }

func (s sessions) Begin(ctx context.Context, key string) runner.SessionCall {
	return s.m.Begin(ctx, key)
}

// TestGateSeesSavedFunctions: a function defined in one call (the
// definition runs nothing, so it is safe) and called by name in the
// next is decided with its body, so it cannot smuggle a command past the
// gate; the raw command is still decided first. With no broker, a
// question is a deny.
func TestGateSeesSavedFunctions(t *testing.T) {
	home := t.TempDir()
	term := tools.Terminal{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}, Sandbox: sandboxtest.New(t)}
	m, err := New(Options{Dir: filepath.Join(t.TempDir(), "shellstate"), Terminal: term})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Bash() {
		t.Skip("no /bin/bash")
	}
	r := runnertest.New(t, runnertest.Options{Terminal: term, Sessions: sessions{m}}).Runner
	work := t.TempDir()
	build := filepath.Join(work, "build")
	if err := os.Mkdir(build, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := sessionCtx(t, "g")
	var out bytes.Buffer
	if o, code, err := r.Shell(ctx, "cd "+work+"; clean() { rm -rf build; }", work, &out, &out); err != nil || !o.Allowed || code != 0 {
		t.Fatalf("define: %+v %d %v %s", o, code, err, out.String())
	}
	// An alias definition is analysed when typed; plant one as if an
	// earlier policy had let it through.
	st, err := m.Load("g")
	if err != nil || st.Funcs["clean"] == "" {
		t.Fatalf("state: %+v %v", st, err)
	}
	st.Aliases = map[string]string{"wipe": "rm -rf build"}
	if err := m.save("g", st); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"clean", "wipe"} {
		o, code, _ := r.Shell(ctx, cmd, work, &out, &out)
		if o.Allowed || code != -1 {
			t.Errorf("%s: allowed (%+v, exit %d): a saved definition escaped the gate", cmd, o.Decision.Verdict, code)
		}
	}
	if _, err := os.Stat(build); err != nil {
		t.Fatalf("build was removed: %v", err)
	}
	// A safe call in the session still runs, in the saved directory.
	out.Reset()
	if o, code, err := r.Shell(ctx, "pwd", work, &out, &out); err != nil || !o.Allowed || code != 0 || out.String() != work+"\n" {
		t.Fatalf("pwd: %+v %d %v %q", o.Decision.Verdict, code, err, out.String())
	}
}
