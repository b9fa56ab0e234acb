package archtest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavyForHook are the packages the per-call hook binary must not link:
// an agent runs it before every tool call, so what it links it
// initialises every time. The OpenAI and MCP SDKs, SQLite (and the C
// runtime it is translated with), the shell and code analysers (the host
// decides; a read is judged by the table alone), the host, its admin API
// server and its store, the browser driver and the CLI framework.
var heavyForHook = []string{
	"github.com/openai/",
	"github.com/modelcontextprotocol/",
	"modernc.org/",
	"github.com/chromedp/",
	"github.com/dop251/goja",
	"mvdan.cc/sh/",
	"github.com/spf13/cobra",
	"github.com/wardenhq/warden/internal/shell",
	"github.com/wardenhq/warden/internal/codescan",
	"github.com/wardenhq/warden/internal/gate",
	"github.com/wardenhq/warden/internal/store",
	"github.com/wardenhq/warden/internal/host",
	"github.com/wardenhq/warden/internal/localapi",
	"github.com/wardenhq/warden/internal/llm",
	"github.com/wardenhq/warden/internal/cli",
}

// TestHookBinaryImportsNoHeavyPackage walks the import graph of
// cmd/warden-hook (as the release build sees it: CGO_ENABLED=0) and
// fails on any package of heavyForHook.
func TestHookBinaryImportsNoHeavyPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/warden-hook")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // the go tool needs its own environment (GOPATH, GOCACHE, …)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/warden-hook: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/wardenhq/warden/internal/hookrun") {
		t.Fatalf("go list found no internal/hookrun among %d packages: the test would check nothing", len(deps))
	}
	for _, d := range deps {
		for _, h := range heavyForHook {
			if d == h || strings.HasPrefix(d, h) && (strings.HasSuffix(h, "/") || strings.HasPrefix(d, h+"/")) {
				t.Errorf("cmd/warden-hook links %s (%s is kept out of the hook path)", d, h)
			}
		}
	}
}
