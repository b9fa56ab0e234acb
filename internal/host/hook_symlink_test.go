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

// TestHookWriteThroughSymlink: Claude Code's Write, Edit, MultiEdit and
// NotebookEdit of a harmless-looking name that is a symlink to
// ~/.bashrc, into ~/.ssh or into warden's config directory are judged on
// the target and denied; the files on disk are unchanged after the
// agent does what the answer lets it do.
func TestHookWriteThroughSymlink(t *testing.T) {
	home, project, state := hookRoot(t)
	mkdir(t, home+"/.ssh", home+"/.config/warden", project, state)
	originals := map[string]string{
		home + "/.bashrc":                    "# rc\n",
		home + "/.ssh/authorized_keys":       "ssh-ed25519 AAAA me\n",
		home + "/.config/warden/config.yaml": "approvals:\n  mode: manual\n",
		project + "/ok.txt":                  "fine\n",
	}
	for f, c := range originals {
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		project + "/notes.txt": home + "/.bashrc",
		project + "/docs":      "../../home/u/.ssh",
		project + "/settings":  home + "/.config/warden",
		project + "/plain.txt": project + "/ok.txt",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	d := ExternalDecider{
		Client: localapi.NewClient(filepath.Join(state, "no-host.sock")),
		Local: LocalConfig{StateDir: state, ConfigPath: home + "/.config/warden/config.yaml",
			Paths: gate.Paths{Home: home, Protected: []string{home + "/.config/warden"}}},
	}
	defer d.Client.Close()
	tests := []struct {
		tool, field, path string
		want              string
	}{
		{"Write", "file_path", project + "/notes.txt", "deny"},
		{"Edit", "file_path", project + "/notes.txt", "deny"},
		{"MultiEdit", "file_path", project + "/docs/authorized_keys", "deny"},
		{"Write", "file_path", project + "/docs/new_key", "deny"},
		{"NotebookEdit", "notebook_path", project + "/settings/config.yaml", "deny"},
		{"Write", "file_path", project + "/settings/../notes.txt", "deny"},
		// Safe: no decision; Claude Code's own rules apply (they let the
		// edit through here).
		{"Write", "file_path", project + "/plain.txt", ""},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]any{
			"session_id": "s1", "cwd": project, "hook_event_name": "PreToolUse", "tool_name": tt.tool,
			"tool_input": map[string]any{tt.field: tt.path, "content": "pwned\n"},
		})
		r := hook.Handle(t.Context(), hook.ClaudeCode{}, bytes.NewReader(in), d, hook.Options{})
		var out struct {
			HookSpecificOutput struct {
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if len(r.Stdout) == 0 && r.Exit == 0 && r.Stderr == "" {
			// no decision
		} else if err := json.Unmarshal(r.Stdout, &out); err != nil {
			t.Fatalf("%s %s: %v (stderr %q)", tt.tool, tt.path, err, r.Stderr)
		}
		got := out.HookSpecificOutput.PermissionDecision
		if got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.tool, tt.path, got, tt.want)
		}
		// The agent acts on the answer: it writes only when allowed,
		// following the link as an editor does.
		if got == "allow" || got == "" {
			if err := os.WriteFile(tt.path, []byte("edited\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for f, c := range originals {
		b, err := os.ReadFile(f)
		if f == project+"/ok.txt" {
			if string(b) != "edited\n" {
				t.Errorf("the allowed write did not happen: %q", b)
			}
			continue
		}
		if err != nil || string(b) != c {
			t.Errorf("%s changed: %q, %v", f, b, err)
		}
	}
	if _, err := os.Stat(home + "/.ssh/new_key"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("new_key was created: %v", err)
	}
}
