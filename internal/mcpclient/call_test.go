package mcpclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
)

// splitCase is a qualified tool name and what splitting it gives.
type splitCase struct {
	in           string
	server, tool string
	ok           bool
}

// checkSplits splits each case's name with split (named name in
// messages) and wants the case's server, tool and ok.
func checkSplits(t *testing.T, name string, split func(string) (string, string, bool), cases []splitCase) {
	t.Helper()
	for _, tc := range cases {
		s, tool, ok := split(tc.in)
		if s != tc.server || tool != tc.tool || ok != tc.ok {
			t.Errorf("%s(%q) = %q, %q, %v; want %q, %q, %v", name, tc.in, s, tool, ok, tc.server, tc.tool, tc.ok)
		}
	}
}

func TestSplit(t *testing.T) {
	checkSplits(t, "Split", mcpclient.Split, []splitCase{
		{"fake__echo", "fake", "echo", true},
		{"fs__read_file", "fs", "read_file", true},
		{"a__b__c", "a", "b__c", true}, // server names never hold "__"
		{"my-srv__x", "my-srv", "x", true},
		{"echo", "", "", false},
		{"__echo", "", "", false},
		{"fake__", "", "", false},
		{"", "", "", false},
		{"fake_echo", "", "", false},
	})
}

func TestResolve(t *testing.T) {
	m := mcpclient.New(mcpclient.Options{Servers: []config.MCPServer{
		{Name: "fs", Command: []string{"x"}}, {Name: "fs_", Command: []string{"x"}}, {Name: "fs-b", Command: []string{"x"}},
	}})
	defer m.Close()
	checkSplits(t, "Resolve", m.Resolve, []splitCase{
		{"fs__read", "fs", "read", true},
		{"fs___read", "fs_", "read", true}, // Split would say "fs", "_read"
		{"fs-b__x__y", "fs-b", "x__y", true},
		{"fs__", "", "", false},
		{"nope__read", "", "", false},
		{"read", "", "", false},
	})
}

// FuzzSplit: Split inverts the qualified names Tools builds, for every
// server name the config accepts.
func FuzzSplit(f *testing.F) {
	f.Add("fake", "echo")
	f.Add("a-b_c", "x__y")
	f.Add("s", "")
	f.Fuzz(func(t *testing.T, server, tool string) {
		s, tl, ok := mcpclient.Split(server + mcpclient.Separator + tool)
		valid := server != "" && tool != "" && !strings.Contains(server, mcpclient.Separator) &&
			!strings.HasSuffix(server, "_") // "a_" + "__" + "b" splits as "a", "_b"
		if valid && (!ok || s != server || tl != tool) {
			t.Fatalf("Split(%q) = %q, %q, %v", server+"__"+tool, s, tl, ok)
		}
		if ok && (s == "" || tl == "" || strings.Contains(s, mcpclient.Separator) || s+mcpclient.Separator+tl != server+mcpclient.Separator+tool) {
			t.Fatalf("Split(%q) = %q, %q: not a split at the first separator", server+"__"+tool, s, tl)
		}
	})
}

func TestTools(t *testing.T) {
	fake := mcptest.New(mcptest.Legacy)
	m := mcpclient.New(mcpclient.Options{
		Servers: []config.MCPServer{
			{Name: "fake", Command: []string{"x"}},
			{Name: "broken", Command: []string{"x"}},
			{Name: "fake2", Command: []string{"x"}},
		},
		Connect: func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
			if s.Name == "broken" {
				return nil, errors.New("no such program")
			}
			return fake.Connect(ctx, s)
		},
		Logger: testLogger(t),
	})
	defer fake.Close()
	defer m.Close()

	tools, err := m.Tools(t.Context(), webOwner(t, "A"))
	te, ok := errors.AsType[*mcpclient.ToolsError](err)
	if !ok || len(te.Failed) != 1 || te.Failed[0].Server != "broken" || !strings.Contains(err.Error(), "no such program") {
		t.Fatalf("err = %v; want a ToolsError naming broken", err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Qualified)
		if tl.Qualified != tl.Server+"__"+tl.Name {
			t.Errorf("%+v: qualified name", tl)
		}
		if tl.InputSchema["type"] != "object" {
			t.Errorf("%s: input schema %v", tl.Qualified, tl.InputSchema)
		}
	}
	want := []string{"confirm_delete", "echo", "env", "open_url", "slow"}
	var wantQ []string
	for _, s := range []string{"fake", "fake2"} {
		for _, n := range want {
			wantQ = append(wantQ, s+"__"+n)
		}
	}
	slices.Sort(names)
	slices.Sort(wantQ)
	if !slices.Equal(names, wantQ) {
		t.Errorf("tools %v, want %v", names, wantQ)
	}
	i := slices.IndexFunc(tools, func(tl mcpclient.Tool) bool { return tl.Qualified == "fake__confirm_delete" })
	if props, _ := tools[i].InputSchema["properties"].(map[string]any); props["path"] == nil || tools[i].Description == "" {
		t.Errorf("confirm_delete: %+v", tools[i])
	}
}

func TestEcho(t *testing.T) {
	m, _ := inProcess(t, mcptest.Legacy, mcpclient.Options{})
	args := map[string]any{"a": "x", "n": 2.0, "list": []any{true}}
	r, err := m.Call(t.Context(), webOwner(t, "A"), "fake", "echo", args)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || r.Text != `{"a":"x","list":[true],"n":2}` || !reflect.DeepEqual(r.Structured, args) {
		t.Errorf("echo = %+v", r)
	}
}

// TestInvariant03_StdioServerStartsClean: a stdio server's environment
// is built from the allowlist plus its configured Env names; warden's
// markers, session identity and unlisted credentials do not reach it.
func TestInvariant03_StdioServerStartsClean(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8",
		"WARDEN_SESSION_KEY=web-1", "WARDEN_YOLO=1", "HERMES_CRON_SESSION=1", "CHAT_SESSION=abc",
		"OPENAI_API_KEY=sk-1", "GITHUB_TOKEN=gh", "SERVER_API_KEY=needed", "EXTRA_ALLOWED=1",
	}
	m := mcpclient.New(mcpclient.Options{
		Servers:     []config.MCPServer{{Name: "fake", Command: mcptest.Command(mcptest.Legacy), Env: []string{"SERVER_API_KEY"}}},
		Environ:     environ,
		Passthrough: []string{"EXTRA_ALLOWED"},
		Logger:      testLogger(t),
		Sandbox:     sandboxtest.New(t),
	})
	defer m.Close()
	r, err := m.Call(t.Context(), cronOwner(t, "j"), "fake", "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(r.Text, "\n")
	want := []string{"EXTRA_ALLOWED", "HOME", "LANG", "PATH", "SERVER_API_KEY", "TMPDIR"} // TMPDIR: the sandbox's private one
	if !slices.Equal(got, want) {
		t.Errorf("the server's environment has %v, want %v", got, want)
	}
}

// TestStdioBinary runs the fakemcp program (not the test binary) as the
// server, as other packages' tests may.
func TestStdioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "fakemcp")
	build := exec.Command("go", "build", "-o", bin, "./mcptest/cmd/fakemcp")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h := newHuman()
	m := mcpclient.New(mcpclient.Options{
		Servers: []config.MCPServer{{Name: "fake", Command: []string{bin, "inputrequests"}}},
		Environ: os.Environ(), Elicit: h, Logger: testLogger(t),
		ProtocolVersion: mcpclient.LatestProtocolVersion, Sandbox: sandboxtest.New(t),
	})
	defer m.Close()
	call := goCall(t.Context(), m, webOwner(t, "A"), "fake", "confirm_delete", map[string]any{"path": "/a"})
	a := h.next(t)
	a.reply <- mcpclient.Answer{Action: mcpclient.ActionAccept, Content: map[string]any{"confirm": true, "note": "bin"}}
	if r := wait(t, call); r.err != nil || r.res.Text != "accepted: confirm=true note=bin" {
		t.Errorf("got %+v, %v", r.res, r.err)
	}
}

// TestStreamableHTTP reaches a server by URL and routes its questions
// by session as over stdio.
func TestStreamableHTTP(t *testing.T) {
	for _, style := range []mcptest.Style{mcptest.Legacy, mcptest.InputRequests} {
		t.Run(style.String(), func(t *testing.T) {
			srv := mcptest.NewServer(style)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			defer ts.Close()
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			h := newHuman()
			opts := mcpclient.Options{
				Servers: []config.MCPServer{{Name: "remote", URL: ts.URL}},
				Elicit:  h, HTTPClient: hc, Logger: testLogger(t), ElicitTimeout: time.Hour,
			}
			if style == mcptest.InputRequests {
				opts.ProtocolVersion = mcpclient.LatestProtocolVersion
			}
			m := mcpclient.New(opts)
			defer m.Close()
			ctx := t.Context()
			web := webOwner(t, "A")
			call := goCall(ctx, m, web, "remote", "confirm_delete", map[string]any{"path": "/a"})
			a := h.next(t)
			if !a.o.Equal(web) {
				t.Errorf("question reached %s", a.o)
			}
			if r, err := m.Call(ctx, cronOwner(t, "j"), "remote", "confirm_delete", map[string]any{"path": "/c"}); err != nil || r.Text != "declined" {
				t.Errorf("cron = %+v, %v", r, err)
			}
			a.reply <- mcpclient.Answer{Action: mcpclient.ActionAccept, Content: map[string]any{"confirm": true, "note": "http"}}
			if r := wait(t, call); r.err != nil || r.res.Text != "accepted: confirm=true note=http" {
				t.Errorf("web = %+v, %v", r.res, r.err)
			}
		})
	}
}
