package action

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPayload(t *testing.T) {
	tests := []struct {
		name string
		a    Action
		want string
	}{
		{"shell", NewShell("git push origin main"), "git push origin main"},
		{"code", NewCode("python", "print(1)\n"), "print(1)\n"},
		{"write", NewWrite("/etc/hosts", 12), "/etc/hosts"},
		{"mcp with args", NewMCP("github", "create_issue", json.RawMessage(`{ "title" : "x" }`), false), `github/create_issue {"title":"x"}`},
		{"mcp without args", NewMCP("fs", "list", nil, true), "fs/list"},
		{"plugin with rule", NewPlugin("guard", "net.egress", "calls example.com"), "guard/net.egress"},
		{"plugin without rule", NewPlugin("guard", "", "why"), "guard"},
		{"unknown kind", Action{Kind: "teleport"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Payload(); got != tt.want {
				t.Errorf("Payload() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		a    Action
		want string // "" means valid
	}{
		{"shell", NewShell("ls"), ""},
		{"shell in dir on docker", NewShell("ls").In("/work").On("docker"), ""},
		{"empty shell", NewShell(""), "shell action needs a command"},
		{"code", NewCode("node", "1"), ""},
		{"code without language", NewCode("", "x"), "needs a language"},
		{"code without source", NewCode("python", ""), "needs source"},
		{"write", NewWrite("a", 0), ""},
		{"write without path", NewWrite("", 3), "needs a path"},
		{"write with negative size", NewWrite("a", -1), "negative size"},
		{"mcp", NewMCP("s", "t", json.RawMessage(`{"a":1}`), false), ""},
		{"mcp null args", NewMCP("s", "t", json.RawMessage(`null`), false), ""},
		{"mcp without tool", NewMCP("s", "", nil, false), "needs a tool"},
		{"mcp bad json", NewMCP("s", "t", json.RawMessage(`{"a":`), false), "not a JSON object"},
		{"mcp array args", NewMCP("s", "t", json.RawMessage(`[1]`), false), "not a JSON object"},
		{"plugin", NewPlugin("p", "", ""), ""},
		{"plugin without name", NewPlugin("", "k", "r"), "needs a plugin name"},
		{"unknown kind", Action{Kind: "teleport"}, `unknown action kind "teleport"`},
		{"zero action", Action{}, `unknown action kind ""`},
		{"bad backend", NewShell("ls").On("Docker Desktop"), `backend "Docker Desktop"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestIsolated(t *testing.T) {
	tests := []struct {
		backend string
		want    bool
	}{
		{"", false}, // unstated is local
		{Local, false},
		{"docker", true},
		{"ssh", true},
	}
	for _, tt := range tests {
		if got := NewShell("x").On(tt.backend).Isolated(); got != tt.want {
			t.Errorf("backend %q: Isolated() = %v, want %v", tt.backend, got, tt.want)
		}
	}
}

func TestDigest(t *testing.T) {
	same := []Action{
		NewShell("rm -rf x"),
		NewShell("rm -rf x").In("/tmp").On("docker"), // where, not what
	}
	if same[0].Digest() != same[1].Digest() {
		t.Error("dir or backend changed the digest")
	}
	if NewMCP("s", "t", json.RawMessage(`{"a": 1}`), false).Digest() != NewMCP("s", "t", json.RawMessage(`{"a":1}`), true).Digest() {
		t.Error("JSON spacing or the read-only hint changed the digest")
	}
	distinct := []Action{
		NewShell("echo hi"),
		NewCode("bash", "echo hi"),
		NewCode("sh", "echo hi"),
		NewCode("bashe", "cho hi"), // length prefixes keep field borders
		NewWrite("echo hi", 0),
		NewMCP("a", "b/c", nil, false),
		NewMCP("a/b", "c", nil, false), // same Payload text, different call
		NewPlugin("a", "b", ""),
		NewPlugin("a/b", "", ""),
	}
	seen := map[string]int{}
	for i, a := range distinct {
		d := a.Digest()
		if len(d) != 64 {
			t.Fatalf("Digest() = %q, want 64 hex digits", d)
		}
		if j, dup := seen[d]; dup {
			t.Errorf("actions %d and %d share a digest", j, i)
		}
		seen[d] = i
	}
}

func TestNewMCPCopiesArgs(t *testing.T) {
	buf := []byte(`{"a":1}`)
	a := NewMCP("s", "t", buf, false)
	buf[2] = 'X'
	if string(a.Args) != `{"a":1}` {
		t.Errorf("Args aliases the caller's buffer: %s", a.Args)
	}
}

func TestJSON(t *testing.T) {
	a := NewMCP("github", "create_issue", json.RawMessage(`{"title":"x"}`), true).In("/w").On("docker")
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"mcp","dir":"/w","backend":"docker","server":"github","tool":"create_issue","args":{"title":"x"},"read_only":true}`
	if string(b) != want {
		t.Errorf("json = %s\nwant   %s", b, want)
	}
	var back Action
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Digest() != a.Digest() || back.Dir != a.Dir || back.Backend != a.Backend || !back.ReadOnly {
		t.Errorf("round trip = %+v", back)
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []Kind{Shell, Code, Write, MCP, Plugin} {
		if !k.Valid() {
			t.Errorf("%q not valid", k)
		}
	}
	if Kind("").Valid() || Kind("Shell").Valid() {
		t.Error("invalid kind reported valid")
	}
}
