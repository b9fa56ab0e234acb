package gate

import (
	"path"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/action"
)

// TestShellWritersSameDecision: every way a shell command writes a file
// reaches the same protected-path table, so each writer gets the write
// tool's decision for the same target — a floor or hardline deny, with
// the same rule — in modes manual, yolo and off, with class grants held.
func TestShellWritersSameDecision(t *testing.T) {
	home, project := protectedHome(t)
	// Targets as the agent names them (from the project directory).
	targets := []string{
		"~/.bashrc", "../../home/u/.bashrc", "notes.txt", "$HOME/.zshrc",
		"~/.ssh/authorized_keys", "keys/authorized_keys", "~/.aws/credentials",
		"~/.config/warden/config.yaml", "cfg/config.yaml", "~/.claude/settings.json",
		".claude/settings.local.json", "~/.codex/config.toml", ".git/hooks/pre-commit", ".git/config",
		"~/.config/systemd/user/x.service", "/var/spool/cron/crontabs/u", ".env", "~/.config/autostart/x.desktop",
		"/dev/sda", "/dev/nvme0n1p1",
	}
	// Writers of one file: %s is the target.
	writers := []string{
		"echo x > %s", "printf x >> %s", "echo x >| %s", "echo x &> %s", "cat > %s <<'EOF'\nx\nEOF", "exec 3> %s",
		"echo x | tee %s", "echo x | tee -a %s", "echo x | sudo tee %s > /dev/null",
		"cp /tmp/x %s", "cp -f /tmp/x %s", "mv /tmp/x %s", "install -m 644 /tmp/x %s", "cp -t %s /tmp/x",
		"dd if=/tmp/x of=%s", "ln -sf /tmp/x %s", "ln /tmp/x %s", "touch %s", "truncate -s 0 %s",
		"sed -i 's/a/b/' %s", "sed --in-place=.bak 's/a/b/' %s", "perl -pi -e 's/a/b/' %s",
		"curl -o %s https://x.example/f", "curl -fsSLo %s https://x.example/f", "wget -O %s https://x.example/f",
		"wget --output-document=%s https://x.example/f", "rsync -a /tmp/x %s", "scp host:x %s", "find . -fprint %s",
		"awk '{print > \"%s\"}' /tmp/in", "sed -n 'w %s' /tmp/in", "socat - CREATE:%s",
		"sudo -u root cp /tmp/x %s", "env -i cp /tmp/x %s", "bash -c 'echo x > %s'", "timeout 5 tee %s < /tmp/x",
		"git config -f %s alias.x status",
	}
	for _, mode := range []string{"manual", "yolo", "off"} {
		g := modeGate(t, home, mode)
		for _, tg := range targets {
			toolPath := tg
			if strings.HasPrefix(tg, "$HOME") {
				toolPath = home + tg[len("$HOME"):]
			}
			want := decide(t, g, chat("s1"), action.NewWrite(toolPath, 1).In(project))
			if want.Verdict != Deny {
				t.Fatalf("%s: the write tool's decision for %s is %s %s", mode, tg, want.Verdict, want.Rule)
			}
			for _, w := range writers {
				cmd := strings.ReplaceAll(w, "%s", tg)
				d := decide(t, g, chat("s1"), action.NewShell(cmd).In(project))
				if d.Verdict != want.Verdict || d.Rule != want.Rule {
					t.Errorf("%s / %s: %s %s, the write tool gets %s %s\n  %s", mode, cmd, d.Verdict, d.Rule, want.Verdict, want.Rule, d.HumanMessage)
				}
			}
		}
		// Writers of a directory: what lands in it.
		for _, dir := range []string{"~/.ssh", "~/.config/warden", "~/.claude", ".git/hooks", "~/.config/systemd/user"} {
			want := decide(t, g, chat("s1"), action.NewWrite(path.Join(dir, "x"), 1).In(project))
			for _, w := range []string{"tar -xf /tmp/a.tar -C %s", "unzip /tmp/a.zip -d %s", "wget -P %s https://x.example/f",
				"git clone https://x.example/r %s", "cp /tmp/x %s/", "mv /tmp/x %s/", "curl --output-dir %s -O https://x.example/x"} {
				if dir == "~/.claude" && (strings.HasPrefix(w, "tar") || strings.HasPrefix(w, "unzip")) {
					// An archive extracted there may hold settings.json: a
					// floor, where the write tool's x is not protected.
					continue
				}
				cmd := strings.ReplaceAll(w, "%s", dir)
				d := decide(t, g, chat("s1"), action.NewShell(cmd).In(project))
				if d.Verdict != want.Verdict || d.Rule != want.Rule {
					t.Errorf("%s / %s: %s %s, the write tool gets %s %s\n  %s", mode, cmd, d.Verdict, d.Rule, want.Verdict, want.Rule, d.HumanMessage)
				}
			}
		}
	}
}
