package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		u    Unit
		want []string
	}{
		{"systemd", Unit{Kind: Systemd, Exe: "/usr/local/bin/warden", Home: "/home/a"},
			[]string{"ExecStart=/usr/local/bin/warden serve\n", "WantedBy=default.target", "NoNewPrivileges=yes"}},
		{"systemd quoting", Unit{Kind: Systemd, Exe: "/opt/my tools/warden", Args: []string{"--config", "/etc/w 100%.yaml", "--state", "$HOME"}, Home: "/home/a"},
			[]string{`ExecStart="/opt/my tools/warden" serve --config "/etc/w 100%%.yaml" --state $$HOME` + "\n"}},
		{"launchd", Unit{Kind: Launchd, Exe: "/Users/a/bin/warden", Args: []string{"--addr", "127.0.0.1:7879"}, Home: "/Users/a"},
			[]string{"<string>/Users/a/bin/warden</string>\n\t\t<string>serve</string>\n\t\t<string>--addr</string>\n\t\t<string>127.0.0.1:7879</string>", "<key>Label</key>\n\t<string>dev.warden.serve</string>"}},
		{"launchd escaping", Unit{Kind: Launchd, Exe: "/Users/a&b/<w>", Home: "/Users/a"},
			[]string{"<string>/Users/a&amp;b/&lt;w&gt;</string>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.u.Render()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("unit lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	if _, err := (Unit{Kind: Systemd, Exe: "warden"}).Render(); err == nil {
		t.Error("a relative binary path was accepted")
	}
	if _, err := (Unit{Kind: "upstart", Exe: "/bin/warden"}).Render(); err == nil {
		t.Error("an unknown service manager was accepted")
	}
}

func TestInstall(t *testing.T) {
	home := t.TempDir()
	u := Unit{Kind: Systemd, Exe: "/usr/bin/warden", Home: home}
	if err := Install(u, false); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(home, ".config", "systemd", "user", "warden.service")
	if u.Path() != want {
		t.Fatalf("path %s, want %s", u.Path(), want)
	}
	data, err := os.ReadFile(want)
	if err != nil || !strings.Contains(string(data), "ExecStart=/usr/bin/warden serve") {
		t.Fatalf("unit %q, %v", data, err)
	}
	if err := Install(u, false); !errors.Is(err, ErrExists) {
		t.Errorf("second install = %v, want ErrExists", err)
	}
	u.Args = []string{"--yolo"}
	if err := Install(u, true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(want); !strings.Contains(string(data), "serve --yolo") {
		t.Errorf("--force did not replace the unit: %s", data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(want)); len(entries) != 1 {
		t.Errorf("left %d files in the unit directory, want 1 (no temporary files)", len(entries))
	}
	if err := Uninstall(u); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unit still there after uninstall: %v", err)
	}
	if err := Uninstall(u); err != nil {
		t.Errorf("uninstall of nothing = %v", err)
	}
}
