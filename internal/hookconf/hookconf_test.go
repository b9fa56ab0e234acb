package hookconf

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 5, 18, 10, 2, 11, 0, time.UTC)

// userSettings is a Claude Code settings file with the user's own keys
// and hooks, in an order warden must keep.
const userSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit-bash.sh"}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "gofmt -w"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "~/bin/status"}
}
`

func TestInstallMerges(t *testing.T) {
	cc := Agents["claude-code"]
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(userSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	e := Entry{Command: "/usr/local/bin/warden hook claude-code", Timeout: 360 * time.Second}
	r, err := cc.Install(path, e, now)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Backup == "" {
		t.Fatalf("first install: %+v", r)
	}
	if b, _ := os.ReadFile(r.Backup); string(b) != userSettings {
		t.Errorf("the backup is not the old file: %s", b)
	}
	got, _ := os.ReadFile(path)
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, got)
	}
	// The user's keys stay, in their order.
	order := []string{`"model"`, `"permissions"`, `"hooks"`, `"statusLine"`}
	last := -1
	for _, k := range order {
		i := strings.Index(string(got), k)
		if i < last {
			t.Errorf("key %s moved:\n%s", k, got)
		}
		last = i
	}
	pre := doc["hooks"].(map[string]any)["PreToolUse"].([]any)
	if len(pre) != 2 {
		t.Fatalf("PreToolUse groups: %v", pre)
	}
	if !strings.Contains(string(got), "audit-bash.sh") || !strings.Contains(string(got), "gofmt -w") {
		t.Errorf("the user's hooks are gone:\n%s", got)
	}
	mine := pre[1].(map[string]any)
	h := mine["hooks"].([]any)[0].(map[string]any)
	if mine["matcher"] != cc.Matcher || h["command"] != e.Command || h["timeout"] != float64(360) {
		t.Errorf("warden's group: %v", mine)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", info.Mode().Perm())
	}

	// Idempotent: nothing written, no backup.
	r, err = cc.Install(path, e, now.Add(time.Minute))
	if err != nil || r.Changed || r.Backup != "" {
		t.Errorf("second install: %+v, %v", r, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(got) {
		t.Error("the second install rewrote the file")
	}

	// Another binary path: warden's entry is replaced, not added.
	e2 := Entry{Command: "warden hook claude-code --state /srv/w", Timeout: 900 * time.Second}
	if r, err = cc.Install(path, e2, now.Add(2*time.Minute)); err != nil || !r.Changed {
		t.Fatalf("update: %+v, %v", r, err)
	}
	f, err := cc.Find(path)
	if err != nil || f.Entries != 1 || f.Command != e2.Command || f.Timeout != 900 {
		t.Errorf("after update: %+v, %v", f, err)
	}
}

func TestInstallNewFileAndAgents(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"claude-code", "codex", "gemini"} {
		a := Agents[name]
		path, err := a.Path(Project, "", dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Install(path, Entry{Command: "warden hook " + name, Timeout: 6 * time.Minute}, now)
		if err != nil || !r.Changed || r.Backup != "" {
			t.Fatalf("%s: %+v, %v", name, r, err)
		}
		f, err := a.Find(path)
		if err != nil || f.Entries != 1 || f.Matcher != a.Matcher {
			t.Errorf("%s: %+v, %v", name, f, err)
		}
		want := 360.0
		if a.Millis {
			want = 360000
		}
		if f.Timeout != want {
			t.Errorf("%s: timeout %v, want %v", name, f.Timeout, want)
		}
	}
}

func TestInstallRefuses(t *testing.T) {
	cc := Agents["claude-code"]
	for name, content := range map[string]string{
		"a list":        `[1,2]`,
		"broken JSON":   `{"hooks": {`,
		"duplicate key": `{"hooks": {}, "hooks": {}}`,
		"hooks a list":  `{"hooks": []}`,
		"event object":  `{"hooks": {"PreToolUse": {}}}`,
		"two values":    `{} {}`,
	} {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := cc.Install(path, Entry{Command: "warden hook claude-code", Timeout: time.Minute}, now); err == nil {
			t.Errorf("%s: installed", name)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: the file was changed", name)
		}
	}
	var ne error = ErrNotObject
	if !errors.Is(ne, ErrNotObject) {
		t.Fatal("sentinel")
	}
}

// TestInstallMixedGroup: a group that holds warden's hook beside the
// user's keeps the user's; warden gets a group of its own.
func TestInstallMixedGroup(t *testing.T) {
	cc := Agents["claude-code"]
	path := filepath.Join(t.TempDir(), "settings.json")
	mixed := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"warden hook claude-code"},{"type":"command","command":"./lint.sh"}]}]}}`
	if err := os.WriteFile(path, []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Install(path, Entry{Command: "warden hook claude-code", Timeout: time.Minute}, now); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	f, _ := cc.Find(path)
	if f.Entries != 1 || f.Matcher != cc.Matcher || !strings.Contains(string(got), "./lint.sh") {
		t.Errorf("%+v\n%s", f, got)
	}
}

func TestIsWarden(t *testing.T) {
	cc := Agents["claude-code"]
	for cmd, want := range map[string]bool{
		"warden hook claude-code":                        true,
		"/usr/local/bin/warden hook claude-code --state": true,
		"'/opt/my tools/warden' hook claude-code":        true,
		"warden hook codex":                              false,
		"notwarden hook claude-code":                     false,
		"echo warden hook claude-code":                   false,
		"warden":                                         false,
	} {
		if got := cc.IsWarden(cmd); got != want {
			t.Errorf("IsWarden(%q) = %v, want %v", cmd, got, want)
		}
	}
}
