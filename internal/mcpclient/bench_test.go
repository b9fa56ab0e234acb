package mcpclient_test

import (
	"log/slog"
	"testing"

	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
)

// BenchmarkCallInProcess measures one echo call through an already open
// session over the in-memory transport: the Manager's bookkeeping plus
// the SDK's JSON-RPC round trip, without process or network cost.
func BenchmarkCallInProcess(b *testing.B) {
	m, _ := inProcess(b, mcptest.Legacy, mcpclient.Options{Logger: slog.New(slog.DiscardHandler)})
	o := webOwner(b, "A")
	args := map[string]any{"msg": "hello"}
	if _, err := m.Call(b.Context(), o, "fake", "echo", args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := m.Call(b.Context(), o, "fake", "echo", args)
		if err != nil || r.Text != `{"msg":"hello"}` {
			b.Fatal(r, err)
		}
	}
}
