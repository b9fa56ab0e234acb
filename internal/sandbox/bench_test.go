//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart measures starting and waiting for one tool call
// (/bin/true) in the same run, three ways: "bare" as warden ran commands
// before the sandbox (os/exec, own process group); "off" through the
// helper without namespaces (mode off); "sandboxed" in the default
// workspace-write sandbox with its hidden paths and writable root. The
// helper is the real warden binary (built once, or $WARDEN_BIN), since
// its start-up is most of the cost. Each reports its median and p99:
//
//	go test -run '^$' -bench Start -benchtime 200x ./internal/sandbox
func BenchmarkStart(b *testing.B) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "warden")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/wardenhq/warden/cmd/warden").CombinedOutput()
		if err != nil {
			b.Skipf("build warden: %v\n%s", err, out)
		}
	}
	ws := b.TempDir()
	mk := func(mode Mode) *Sandbox {
		root := b.TempDir()
		state := filepath.Join(root, "state")
		must(b, os.MkdirAll(state, 0o700))
		s, err := New(context.Background(), Config{Mode: mode, Hide: []string{state}, TempRoot: filepath.Join(state, "sandbox"), Network: true, Executable: bin, Home: filepath.Join(root, "home")})
		must(b, err)
		if s.Err() != nil {
			b.Skipf("no sandbox: %s", s.Status().Why)
		}
		return s
	}
	report := func(b *testing.B, ds []time.Duration) {
		slices.Sort(ds)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(ds[len(ds)/2]), "median-ms")
		b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
	}
	b.Run("bare", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
			c := exec.Command("/bin/true")
			c.Dir, c.Env = ws, []string{"PATH=/usr/bin:/bin"}
			must(b, c.Run())
			ds = append(ds, time.Since(start))
		}
		report(b, ds)
	})
	for _, mode := range []Mode{Off, WorkspaceWrite} {
		s := mk(mode)
		name := "sandboxed"
		if mode == Off {
			name = "off"
		}
		b.Run(name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				start := time.Now()
				c, err := s.Command(Spec{Path: "/bin/true", Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}})
				must(b, err)
				must(b, c.Run(context.Background()))
				ds = append(ds, time.Since(start))
			}
			report(b, ds)
		})
	}
}
