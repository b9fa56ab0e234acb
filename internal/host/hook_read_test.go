package host

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/localapi"
)

// TestHookSecretReads: Claude Code's Read, Grep and Glob of secrets get
// ask (warden's own files and user deny rules: deny), resolved like
// writes (a link named notes.txt to the AWS credentials is a read of
// the credentials); ordinary reads get no answer.
func TestHookSecretReads(t *testing.T) {
	home, project, state := hookRoot(t)
	mkdir(t, home+"/.ssh", home+"/.aws", home+"/.config/warden", project+"/src", state)
	for _, f := range []string{home + "/.ssh/id_ed25519", home + "/.aws/credentials", project + "/.env", project + "/README.md", project + "/secret.txt"} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(home+"/.aws/credentials", project+"/notes.txt"); err != nil {
		t.Fatal(err)
	}
	cfg := home + "/.config/warden/config.yaml"
	if err := os.WriteFile(cfg, []byte("approvals:\n  deny: ['read */secret.txt']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := ExternalDecider{
		Client: localapi.NewClient(filepath.Join(state, "no-host.sock")),
		Local:  LocalConfig{StateDir: state, ConfigPath: cfg, Paths: gate.Paths{Home: home, Protected: []string{home + "/.config/warden"}}},
	}
	defer d.Client.Close()
	tests := []struct {
		tool  string
		input map[string]any
		want  string // "" is no answer
	}{
		{"Read", map[string]any{"file_path": home + "/.ssh/id_ed25519"}, "ask"},
		{"Read", map[string]any{"file_path": project + "/.env"}, "ask"},
		{"Read", map[string]any{"file_path": "notes.txt"}, "ask"},
		{"Read", map[string]any{"file_path": "src/../../../home/u/.aws/credentials"}, "ask"},
		{"Read", map[string]any{"file_path": cfg}, "deny"},
		{"Read", map[string]any{"file_path": project + "/secret.txt"}, "deny"},
		{"Read", map[string]any{"file_path": project + "/README.md"}, ""},
		{"Grep", map[string]any{"pattern": "key", "path": home + "/.ssh"}, "ask"},
		{"Grep", map[string]any{"pattern": "TOKEN", "glob": ".env*"}, "ask"},
		{"Grep", map[string]any{"pattern": "func", "path": project + "/src"}, ""},
		{"Glob", map[string]any{"pattern": "**/.env*"}, "ask"},
		{"Glob", map[string]any{"pattern": "*.pem", "path": home}, "ask"},
		{"Glob", map[string]any{"pattern": "**/*.go"}, ""},
		{"WebFetch", map[string]any{"url": "https://example.com"}, ""},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": project, "hook_event_name": "PreToolUse", "tool_name": tt.tool, "tool_input": tt.input})
		r := hook.Handle(t.Context(), hook.ClaudeCode{}, bytes.NewReader(in), d, hook.Options{})
		got := ""
		if len(r.Stdout) > 0 {
			var out struct {
				HookSpecificOutput struct {
					PermissionDecision string `json:"permissionDecision"`
					Reason             string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(r.Stdout, &out); err != nil {
				t.Fatal(err)
			}
			got = out.HookSpecificOutput.PermissionDecision
			if got == "ask" && !strings.Contains(out.HookSpecificOutput.Reason, "[read.") {
				t.Errorf("%s %v: reason %q names no class", tt.tool, tt.input, out.HookSpecificOutput.Reason)
			}
		}
		if got != tt.want || r.Exit != 0 {
			t.Errorf("%s %v: %q (exit %d, stderr %q), want %q", tt.tool, tt.input, got, r.Exit, r.Stderr, tt.want)
		}
	}
}

// hookRoot is where a hook test's agent runs: a home, a project and a
// host's state directory (none made yet) under a temporary root with no
// symlink in its path, as the hook resolves paths.
func hookRoot(t *testing.T) (home, project, state string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root + "/home/u", root + "/work/p", root + "/state"
}
