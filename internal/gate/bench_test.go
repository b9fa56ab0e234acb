package gate

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/owner"
)

const benchConfig = `approvals:
  mode: manual
  cron_mode: deny
  deny: ['curl * | sh', 'terraform destroy *', 'psql * prod*', 'aws iam *', 'gcloud projects delete *']
command_allowlist: ['git push *', 'npm publish *', 'class:git.reset_hard']
`

var benchActions = []action.Action{
	action.NewShell("git status --porcelain && git diff --stat"),
	action.NewShell("rm -rf build/ dist/ && npm run build"),
	action.NewShell("git push --force-with-lease origin feature"),
	action.NewShell("find . -name '*.pyc' -exec rm -f {} +"),
}

// BenchmarkDecide is one decision for a typical shell action with a
// loaded config, analysis included.
func BenchmarkDecide(b *testing.B) {
	b.ReportAllocs()
	g := setup{yaml: benchConfig}.gate(b)
	ctx := owner.With(context.Background(), chat("s1"))
	for i := 0; b.Loop(); i++ {
		if _, err := g.Decide(ctx, benchActions[i%len(benchActions)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideParallel runs decisions from 8 goroutines (4 per core on
// the 2-core reference machine).
func BenchmarkDecideParallel(b *testing.B) {
	g := setup{yaml: benchConfig}.gate(b)
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		ctx := owner.With(context.Background(), chat("s1"))
		i := 0
		for pb.Next() {
			if _, err := g.Decide(ctx, benchActions[i%len(benchActions)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkDecideEach is one decision per kind of typical shell action:
// a safe one-command line (the fast analysis path), a safe compound
// line, a dangerous line a human is asked about, a line an allowlist
// grant covers.
func BenchmarkDecideEach(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{
		{"simple-safe", "git status --porcelain"},
		{"compound-safe", "git status --porcelain && git diff --stat"},
		{"ask", "rm -rf build/ dist/ && npm run build"},
		{"granted", "git push --force-with-lease origin feature"},
		{"find-exec", "find . -name '*.pyc' -exec rm -f {} +"},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := setup{yaml: benchConfig}.gate(b)
			ctx := owner.With(context.Background(), chat("s1"))
			act := action.NewShell(c.cmd)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Decide(ctx, act); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
