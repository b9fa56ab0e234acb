package archtest

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the layering of internal/, written down once (the same
// picture in words is docs/architecture.md). A package may import only
// packages of lower layers; a new package must be placed here before it
// builds a test run that passes. Test-support packages (testSupport) are
// outside the layering: only tests import them.
var layers = [][]string{
	// 0: vocabulary and leaves: no internal imports.
	{"action", "ancestry", "anchor", "backup", "codescan", "execenv", "form", "jsonbody", "llm",
		"owner", "policy", "protect", "redact", "service", "socket", "store/codec"},
	// 1: readers of text and configuration.
	{"config", "connlimit", "hookconf", "llm/openai", "shell"},
	// 2: grants are patterns over analysed actions; reads (Read, Grep,
	// Glob) judged by the protected-path table alone.
	{"grant", "reads"},
	// 3: the store: rows, not model or analysis types.
	{"store"},
	// The SQL both stores run.
	{"store/sqldb"},
	// 4: things kept in the store, and the pure decision.
	{"board", "ccperm", "credential", "gate", "hook", "sandbox", "store/postgres", "store/sqlite"},
	// 5: asking and explaining: the broker, the audit record, the
	// explanation of a decision, the guardian model, the tools and MCP
	// clients that run inside the sandbox.
	// hookrun is the small hook binary's whole path (socket client,
	// protocols, read judgement).
	{"audit", "broker", "explain", "guardian", "hookrun", "mcpclient", "tools"},
	// 6: the one path decide → audit → ask → audit → run, session shells,
	// and the surface interface and terminal rendering.
	// cluster: several hosts on one shared store (leases, reaping,
	// following other hosts' request changes); ops: health and metrics.
	{"cluster", "ops", "runner", "shellstate", "surface", "surface/terminal"},
	// 7: work built on the runner, and surfaces built on the interface.
	{"agent", "surface/chat", "surface/notify"},
	// 8: scheduled and delegated work; chat adapters.
	{"cron", "workerapi", "surface/discord", "surface/slack", "surface/telegram"},
	// 9: the dispatcher, the local API, the web console; the host's side
	// of the surface interface (hostsurface), which surfaces' tests build
	// on real parts.
	{"dispatch", "hostsurface", "localapi", "surface/web"},
	// 10: clients of the local API.
	{"doctor", "mcpserve"},
	// 11: the host wires everything.
	{"host"},
	// 12: flags and wiring.
	{"cli"},
	// Packages that hold only tests.
	{"archtest"},
}

// forbidden are arrows the layer order would allow but the design does
// not (issue 15): surfaces talk to the host through internal/surface and
// never reach into work or storage.
var forbidden = map[string][]string{
	"surface/*": {"agent", "board", "cron", "dispatch", "runner", "store/sqlite", "workerapi", "localapi", "host", "hostsurface"},
	"store":     {"llm", "shell"},
	"broker":    {"shell"},
	"gate":      {"store", "store/sqlite", "broker", "runner"},
	"explain":   {"store", "broker", "runner"},
}

// debts are forbidden arrows that exist today, each to be removed; the
// test fails when one is gone, so the list stays true.
var debts = map[string][]string{}

// TestLayers fails on an import that breaks the layering: upwards or
// sideways within a layer, or a forbidden arrow that is not a listed
// debt; and on a debt that has been paid but is still listed.
func TestLayers(t *testing.T) {
	layer := map[string]int{}
	for i, ps := range layers {
		for _, p := range ps {
			layer[p] = i
		}
	}
	root := filepath.Join("..")
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || testSupport(module+"/internal/"+rel) {
			return nil
		}
		bp, err := build.Default.ImportDir(p, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		var deps []string
		for _, imp := range bp.Imports {
			if d, ok := strings.CutPrefix(imp, module+"/internal/"); ok {
				deps = append(deps, d)
			}
		}
		pkgs[rel] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("found %d packages: the walk is broken", len(pkgs))
	}
	used := map[string]bool{}
	for p, deps := range pkgs {
		lp, ok := layer[p]
		if !ok {
			t.Errorf("internal/%s is in no layer: place it in archtest's layers and docs/architecture.md", p)
			continue
		}
		for _, d := range deps {
			if testSupport(module + "/internal/" + d) {
				continue // TestTestSupportOnlyInTests
			}
			ld, ok := layer[d]
			switch {
			case !ok:
				continue // reported as its own package
			case ld >= lp:
				t.Errorf("internal/%s (layer %d) imports internal/%s (layer %d): only lower layers may be imported", p, lp, d, ld)
			case isForbidden(p, d) && slices.Contains(debts[p], d):
				used[p+" → "+d] = true
			case isForbidden(p, d):
				t.Errorf("internal/%s imports internal/%s: a forbidden arrow (see archtest's forbidden)", p, d)
			}
		}
	}
	for p, ds := range debts {
		for _, d := range ds {
			if !used[p+" → "+d] {
				t.Errorf("debt %s → %s is paid: remove it from archtest's debts and docs/architecture.md", p, d)
			}
		}
	}
}

func isForbidden(p, d string) bool {
	for from, tos := range forbidden {
		if from == p || strings.HasSuffix(from, "/*") && strings.HasPrefix(p, strings.TrimSuffix(from, "*")) {
			if slices.Contains(tos, d) {
				return true
			}
		}
	}
	return false
}
