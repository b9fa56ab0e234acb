package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/grant"
)

// protectedHome builds a real home directory with warden's config
// directory, a project, and symlinks into protected places, and returns
// a gate over it in the given mode.
func protectedHome(t *testing.T) (home, project string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(root, "home", "u")
	project = filepath.Join(root, "work", "p")
	for _, d := range []string{home + "/.ssh", home + "/.config/warden", home + "/.claude", project + "/.git/hooks", project + "/.claude"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{home + "/.bashrc", home + "/.ssh/authorized_keys", home + "/.config/warden/config.yaml"} {
		if err := os.WriteFile(f, []byte("orig"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		project + "/notes.txt": home + "/.bashrc",
		project + "/cfg":       home + "/.config/warden",
		project + "/keys":      "../../home/u/.ssh",
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	return home, project
}

func modeGate(t *testing.T, home, mode string) *Gate {
	t.Helper()
	cfg := config.Default()
	if mode == "off" {
		var err error
		if cfg, _, err = config.Parse([]byte("approvals:\n  mode: \"off\"\n"), "t.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Compile(cfg, Paths{Home: home, Protected: []string{home + "/.config/warden"}})
	if err != nil {
		t.Fatal(err)
	}
	mem := &grant.Memory{}
	// A class grant the session holds for every write class must not
	// lift a floor either.
	for _, c := range []string{"write.shell_rc", "write.ssh", "write.credentials", "write.agent_config", "write.git_config", "persist.autostart", "persist.cron", "write.env_file", ClassWrite, ClassCode} {
		mem.Add(sessionGrant("s1", grant.Class, c))
	}
	ys := &yoloSessions{on: map[string]bool{}}
	if mode == "yolo" {
		ys.on["s1"] = true
	}
	g, err := New(Options{Policy: p, Grants: mem, Sessions: ys})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestWriteFloorsEveryWriterEveryMode: the same protected target gets
// the same decision whichever writer reaches it — the write tool (and
// the hook's Write/Edit and MCP write_file, which map to the same
// action), a shell redirect, code that opens the file — in modes
// manual, yolo and off, with class grants held: a floor is never lifted.
func TestWriteFloorsEveryWriterEveryMode(t *testing.T) {
	home, project := protectedHome(t)
	targets := []struct {
		name string
		path string // as the agent names it, relative to the project
		rule string
	}{
		{"bashrc by ~", "~/.bashrc", RuleProtectedPath},
		{"bashrc climbing out", "../../home/u/.bashrc", RuleProtectedPath},
		{"bashrc through a symlink", "notes.txt", RuleProtectedPath},
		{"authorized_keys", "~/.ssh/authorized_keys", RuleProtectedPath},
		{"authorized_keys through a linked dir", "keys/authorized_keys", RuleProtectedPath},
		{"aws credentials", "~/.aws/credentials", RuleProtectedPath},
		{"warden config", "~/.config/warden/config.yaml", RuleHardline},
		{"warden config through a linked dir", "cfg/config.yaml", RuleHardline},
		{"claude user settings", "~/.claude/settings.json", RuleProtectedPath},
		{"claude project settings", ".claude/settings.local.json", RuleProtectedPath},
		{"codex config", "~/.codex/config.toml", RuleProtectedPath},
		{"git hook", ".git/hooks/pre-commit", RuleProtectedPath},
		{"git config", ".git/config", RuleProtectedPath},
		{"systemd user unit", "~/.config/systemd/user/x.service", RuleProtectedPath},
		{"crontab spool", "/var/spool/cron/crontabs/u", RuleProtectedPath},
		{"env file", ".env", RuleProtectedPath},
	}
	writers := []struct {
		name string
		act  func(p string) action.Action
	}{
		{"write tool", func(p string) action.Action { return action.NewWrite(p, 4).In(project) }},
		{"shell >", func(p string) action.Action { return action.NewShell("echo x > " + p).In(project) }},
		{"shell >>", func(p string) action.Action { return action.NewShell("printf x >> " + p).In(project) }},
		{"python open", func(p string) action.Action {
			return action.NewCode("python", "open('"+p+"', 'w').write('x')").In(project)
		}},
		{"node writeFileSync", func(p string) action.Action {
			return action.NewCode("node", "require('fs').writeFileSync('"+p+"', 'x')").In(project)
		}},
	}
	for _, mode := range []string{"manual", "yolo", "off"} {
		g := modeGate(t, home, mode)
		for _, tg := range targets {
			for _, w := range writers {
				p := tg.path
				if strings.HasPrefix(w.name, "python") || strings.HasPrefix(w.name, "node") {
					// Code does not expand ~ itself.
					p = strings.Replace(p, "~", home, 1)
				}
				d := decide(t, g, chat("s1"), w.act(p))
				if d.Verdict != Deny || d.Rule != tg.rule {
					t.Errorf("%s / %s / %s: %s %s, want deny %s\n%s", mode, w.name, tg.name, d.Verdict, d.Rule, tg.rule, d.HumanMessage)
				}
			}
		}
	}
	for _, f := range []string{home + "/.bashrc", home + "/.ssh/authorized_keys", home + "/.config/warden/config.yaml"} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "orig" {
			t.Errorf("%s changed: %q %v", f, b, err)
		}
	}
}

// An ordinary file stays an ordinary write, and a symlink to an
// ordinary file is not protected.
func TestWriteOrdinary(t *testing.T) {
	home, project := protectedHome(t)
	if err := os.Symlink(project+"/src.txt", project+"/alias.txt"); err != nil {
		t.Fatal(err)
	}
	g := modeGate(t, home, "manual")
	for _, a := range []action.Action{
		action.NewWrite("src/main.go", 10).In(project),
		action.NewWrite("alias.txt", 10).In(project),
		action.NewShell("echo x > build.log").In(project),
		action.NewCode("python", "open('out.txt', 'w').write('x')").In(project),
	} {
		d := decide(t, g, chat("s1"), a)
		if d.Verdict == Deny {
			t.Errorf("%v: %s %s", a, d.Verdict, d.HumanMessage)
		}
	}
}

// A write to a file with several hard links (one of them ~/.bashrc) is
// not plainly safe and no bypass lets it through.
func TestWriteHardlink(t *testing.T) {
	home, project := protectedHome(t)
	if err := os.Link(home+"/.bashrc", project+"/hard.txt"); err != nil {
		t.Skipf("hard links: %v", err)
	}
	for _, mode := range []string{"manual", "yolo", "off"} {
		d := decide(t, modeGate(t, home, mode), chat("s1"), action.NewWrite("hard.txt", 4).In(project))
		if d.Verdict != Ask || !slices.Contains(d.Classes, ClassHardlink) {
			t.Errorf("%s: %s %s %v, want ask with %s", mode, d.Verdict, d.Rule, d.Classes, ClassHardlink)
		}
	}
}
