package host

import (
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
)

// BenchmarkTerminalCall is the end-to-end time of a typical terminal
// call: `warden exec --session` of `ls -la` over the admin socket to a
// real host — the gate, the durable audit record, the session's shell
// state (restore and save) and the command in its sandbox — with the
// sandbox on (workspace-write) and off, in the same run. The helper is
// this test binary (as heavy as warden). Reports median and p99:
//
//	go test -run '^$' -bench TerminalCall -benchtime 100x ./internal/host
func BenchmarkTerminalCall(b *testing.B) {
	for _, mode := range []string{"workspace-write", "off"} {
		b.Run(mode, func(b *testing.B) {
			cfg := configured(b, "sandbox: {mode: \""+mode+"\"}\n")
			th := startHost(b, cfg)
			work := b.TempDir()
			var ds []time.Duration
			for b.Loop() {
				start := time.Now()
				code := -1
				err := th.client.Exec(b.Context(), localapi.ExecRequest{Session: "bench", Command: "ls -la", Dir: work}, func(e localapi.Event) error {
					if e.Event == localapi.EventExit && e.Code != nil {
						code = *e.Code
					}
					return nil
				})
				if err != nil || code != 0 {
					b.Fatalf("exec: %v, exit %d", err, code)
				}
				ds = append(ds, time.Since(start))
			}
			slices.Sort(ds)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(ds[len(ds)/2]), "median-ms")
			b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
		})
	}
}
