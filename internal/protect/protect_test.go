package protect

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/protected-paths.md")

func testTable() *Table {
	return New(Paths{StateDir: "/srv/wstate", ConfigDir: "/home/u/conf/warden", Extra: []string{"/opt/w/config.yaml"}})
}

func TestMatch(t *testing.T) {
	tab := testTable()
	cases := []struct {
		path  string
		acc   Access
		class string
		tier  Tier
	}{
		// warden's own paths, both ways, given and default.
		{"/srv/wstate/warden.db", Write, ClassSelf, Hardline},
		{"/srv/wstate/warden.db", Read, ClassSelf, Hardline},
		{"/srv/wstate", Write, ClassSelf, Hardline},
		{"/srv/wstate-other/x", Write, "", None},
		{"/home/u/conf/warden/config.yaml", Write, ClassSelf, Hardline},
		{"/opt/w/config.yaml", Read, ClassSelf, Hardline},
		{"/home/u/.config/warden/config.yaml", Write, ClassSelf, Hardline},
		{"/root/.local/state/warden/admin.sock", Read, ClassSelf, Hardline},
		{"/HOME/U/.CONFIG/WARDEN/config.yaml", Write, ClassSelf, Hardline},
		{"/home/u/.config/wardenx/a", Write, "", None},
		// devices
		{"/dev/sda", Write, ClassDiskWrite, Hardline},
		{"/dev/sdb1", Write, ClassDiskWrite, Hardline},
		{"/dev/nvme0n1p2", Write, ClassDiskWrite, Hardline},
		{"/dev/mapper/root", Write, ClassDiskWrite, Hardline},
		{"/dev/disk/by-id/ata-x", Write, ClassDiskWrite, Hardline},
		{"/dev/sdb-backup.img", Write, ClassDevice, Dangerous},
		{"/dev/null", Write, "", None},
		{"/dev/stderr", Write, "", None},
		{"/dev/shm/x/y", Write, "", None},
		{"/dev/sda", Read, "", None},
		// agents
		{"/home/u/.claude/settings.json", Write, ClassAgentConfig, Floor},
		{"/home/u/.claude/settings.local.json", Write, ClassAgentConfig, Floor},
		{"/work/proj/.claude/settings.json", Write, ClassAgentConfig, Floor},
		{"/home/u/.claude.json", Write, ClassAgentConfig, Floor},
		{"/work/proj/.mcp.json", Write, ClassAgentConfig, Floor},
		{"/home/u/.codex/config.toml", Write, ClassAgentConfig, Floor},
		{"/home/u/.gemini/settings.json", Write, ClassAgentConfig, Floor},
		{"/home/u/.hermes/config.yaml", Write, ClassAgentConfig, Floor},
		{"/home/u/.cursor/mcp.json", Write, ClassAgentConfig, Floor},
		{"/home/u/.config/Claude/claude_desktop_config.json", Write, ClassAgentConfig, Floor},
		{"/work/proj/.claude/commands/x.md", Write, "", None},
		{"/home/u/.claude/settings.json", Read, "", None},
		{"/home/u/.claude/.credentials.json", Read, ClassReadAgentAuth, Dangerous},
		// shell rc
		{"/home/u/.bashrc", Write, ClassShellRC, Floor},
		{"/root/.zshenv", Write, ClassShellRC, Floor},
		{"/home/u/.config/fish/config.fish", Write, ClassShellRC, Floor},
		{"/home/u/.config/fish/conf.d/x.fish", Write, ClassShellRC, Floor},
		{"/etc/profile.d/x.sh", Write, ClassShellRC, Floor},
		{"/home/u/.bashrc", Read, "", None},
		{"/home/u/bashrc", Write, "", None},
		// ssh
		{"/home/u/.ssh/authorized_keys", Write, ClassSSH, Floor},
		{"/home/u/.ssh", Write, ClassSSH, Floor},
		{"/home/u/.ssh/config", Write, ClassSSH, Floor},
		{"/home/u/.ssh/id_ed25519", Read, ClassReadSSH, Dangerous},
		{"/home/u/.ssh/id_ed25519.pub", Read, "", None},
		{"/home/u/.ssh/known_hosts", Read, "", None},
		{"/home/u/backup/id_rsa", Read, ClassReadSSH, Dangerous},
		// credentials
		{"/home/u/.aws/credentials", Write, ClassCredentials, Floor},
		{"/home/u/.aws/credentials", Read, ClassReadCreds, Dangerous},
		{"/home/u/.config/gcloud/application_default_credentials.json", Read, ClassReadCreds, Dangerous},
		{"/home/u/.kube/config", Read, ClassReadCreds, Dangerous},
		{"/home/u/.docker/config.json", Write, ClassCredentials, Floor},
		{"/home/u/.netrc", Read, ClassReadCreds, Dangerous},
		{"/home/u/.pgpass", Write, ClassCredentials, Floor},
		{"/work/p/.npmrc", Write, ClassCredentials, Floor},
		{"/home/u/.pypirc", Read, ClassReadCreds, Dangerous},
		{"/home/u/.git-credentials", Read, ClassReadCreds, Dangerous},
		{"/home/u/.gnupg/private-keys-v1.d/x.key", Read, ClassReadCreds, Dangerous},
		{"/home/u/.config/gh/hosts.yml", Read, ClassReadCreds, Dangerous},
		{"/work/p/infra/terraform.tfstate", Read, ClassReadCreds, Dangerous},
		{"/work/p/infra/terraform.tfstate", Write, "", None},
		{"/work/p/server.key", Read, ClassReadKey, Dangerous},
		{"/work/p/server.pem", Read, ClassReadKey, Dangerous},
		// env
		{"/work/p/.env", Write, ClassEnvWrite, Floor},
		{"/work/p/.env", Read, ClassReadEnv, Dangerous},
		{"/work/p/.env.production", Read, ClassReadEnv, Dangerous},
		{"/work/p/.env.example", Read, "", None},
		{"/work/p/.environment", Read, "", None},
		// git
		{"/work/p/.git/hooks/pre-commit", Write, ClassGitHooks, Floor},
		{"/work/p/.git/config", Write, ClassGitHooks, Floor},
		{"/home/u/.gitconfig", Write, ClassGitHooks, Floor},
		{"/work/p/.git/objects/ab/cd", Write, "", None},
		{"/work/p/.gitignore", Write, "", None},
		// persistence
		{"/home/u/.config/autostart/x.desktop", Write, ClassAutostart, Floor},
		{"/home/u/.config/systemd/user/x.service", Write, ClassAutostart, Floor},
		{"/Users/u/Library/LaunchAgents/x.plist", Write, ClassAutostart, Floor},
		{"/var/spool/cron/crontabs/u", Write, ClassCron, Floor},
		{"/etc/cron.d/x", Write, ClassCron, Floor},
		{"/home/u/.local/bin/ls", Write, ClassUserBin, Dangerous},
		// system
		{"/etc/hosts", Write, ClassSystemConfig, Dangerous},
		{"/etc/hosts", Read, "", None},
		{"/etc/shadow", Read, ClassReadSystem, Dangerous},
		{"/etc/passwd", Write, ClassCredentials, Floor},
		{"/usr/bin/python3", Write, ClassSystemDir, Dangerous},
		{"/proc/1/environ", Read, ClassReadProcEnv, Dangerous},
		{"/home/u/.bash_history", Read, ClassReadHistory, Dangerous},
		// plain
		{"/work/p/main.go", Write, "", None},
		{"/tmp/x", Write, "", None},
		{"/", Write, "", None},
		// relative: any depth
		{".ssh/authorized_keys", Write, ClassSSH, Floor},
		{"../../.bashrc", Write, ClassShellRC, Floor},
		{"etc/passwd", Write, "", None}, // anchored entries need a directory
		{"../../etc/passwd", Write, ClassCredentials, Floor},
		{"foo/.git/hooks/x", Write, ClassGitHooks, Floor},
		{"notes.txt", Write, "", None},
	}
	for _, c := range cases {
		m := tab.Match(c.path, c.acc)
		if m.Class != c.class || m.Tier != c.tier {
			t.Errorf("Match(%q, %s) = %s %q (%s), want %s %q", c.path, c.acc, m.Tier, m.Class, m.Pattern, c.tier, c.class)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	tab := testTable()
	cases := []struct {
		glob  string
		acc   Access
		class string
	}{
		{"/home/u/.ss?/auth*", Write, ClassSSH},
		{"/home/u/.*rc", Write, ClassShellRC},
		{"/home/u/*", Write, ClassUserBin}, // * does not match .bashrc, but could match bin
		{"/home/u/.*", Write, ClassAgentConfig},
		{"/home/u/.b*", Write, ClassShellRC},
		{"/home/u/*rc", Write, ""},
		{"/work/*/authorized_keys", Write, ""},  // * skips hidden directories
		{"/work/**/authorized_keys", Write, ""}, // ** does not stand for a protected directory
		{"/work/**/id_rsa", Read, ClassReadSSH},
		{"/home/*/.ssh/*", Write, ClassSSH},
		{"/dev/nvme?n1", Write, ClassDiskWrite},
		{"/dev/sd[a-c]", Write, ClassDiskWrite},
		{"/srv/w*/x", Write, ClassSelf},
		{"/srv/*", Read, ClassSelf},
		{"/home/u/.config/*/config.yaml", Write, ClassSelf},
		{"/home/u/[.]ssh/id_*", Read, ClassReadSSH},
		{"/home/u/.ssh/*.pub", Read, ClassReadSSH}, // a glob is never let off by an exception
		{"/home/u/.ssh/id_rsa.pub", Read, ""},      // a literal is
		{"/tmp/*.txt", Write, ""},
		{"/work/p/src/*.go", Write, ""},
		{"/work/p/[!.]*", Write, ""},
		{"*.pem", Read, ClassReadKey},
		{"/home/u/.env*", Read, "*"},
		{"/dev/sdb-backup.im?", Write, ClassDiskWrite}, // refine is skipped for globs: could match more
	}
	for _, c := range cases {
		m := tab.MatchPattern(c.glob, c.acc)
		if c.class == "*" && m.Tier == Dangerous {
			continue
		}
		if m.Class != c.class {
			t.Errorf("MatchPattern(%q, %s) = %q (%s), want %q", c.glob, c.acc, m.Class, m.Pattern, c.class)
		}
	}
}

func TestMatchTree(t *testing.T) {
	tab := testTable()
	cases := []struct {
		path  string
		class string
	}{
		{"/home/u/.config", ClassSelf},
		{"/home/u", ClassSelf},
		{"/srv", ClassSelf},
		{"/", ClassSelf},
		{"/work/p/src", ""},
		{"/work/p", ""},
		{"/work/p/.claude", ClassAgentConfig},
		{"/home/u/.ssh", ClassSSH},
		{"/home/u/.local", ClassSelf},
		{"/etc", ClassSelf}, // /etc/warden
		{"../.config", ClassSelf},
		{"/tmp/build", ""},
	}
	for _, c := range cases {
		if m := tab.MatchTree(c.path, Write); m.Class != c.class {
			t.Errorf("MatchTree(%q) = %q (%s), want %q", c.path, m.Class, m.Pattern, c.class)
		}
	}
}

func TestMatchGlobDotglob(t *testing.T) {
	tab := testTable()
	if m := tab.MatchGlob("/home/u/*", Write, true); m.Tier != Floor {
		t.Errorf("with dotglob, * reaches .bashrc: %+v", m)
	}
	if m := tab.MatchGlob("/work/*/authorized_keys", Write, true); m.Tier != Floor {
		t.Errorf("with dotglob, ** reaches .ssh: %+v", m)
	}
}

func TestOwnPathsEscaped(t *testing.T) {
	tab := New(Paths{StateDir: "/data/[w]*state"})
	if m := tab.Match("/data/[w]*state/db", Write); m.Class != ClassSelf {
		t.Errorf("literal own dir with glob characters: %+v", m)
	}
	if m := tab.Match("/data/wxstate/db", Write); m.Class == ClassSelf {
		t.Errorf("own dir read as a pattern: %+v", m)
	}
	if m := New(Paths{StateDir: "relative/dir"}).Match("/x/relative/dir/db", Write); m.Class == ClassSelf {
		t.Errorf("relative own dir must be ignored (the CLI passes absolute paths): %+v", m)
	}
}

// Every class the table uses is described, and every described class
// is used.
func TestClassesDescribed(t *testing.T) {
	used := map[string]bool{}
	for _, e := range New(Paths{StateDir: "/s"}).Entries() {
		if _, ok := Lookup(e.Class); !ok {
			t.Errorf("entry %q: class %q not described", e.Pattern, e.Class)
		}
		if e.Why == "" || e.Tier == None || e.Access == 0 {
			t.Errorf("entry %q incomplete: %+v", e.Pattern, e)
		}
		used[e.Class] = true
	}
	for _, c := range Classes() {
		if !used[c.Key] {
			t.Errorf("class %q described but unused", c.Key)
		}
	}
}

func TestDocs(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "protected-paths.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/protect -run TestDocs -update)", err)
	}
	if string(got) != want {
		t.Errorf("docs/protected-paths.md is out of date: run go test ./internal/protect -run TestDocs -update")
	}
	if !strings.Contains(want, "`.ssh/**`") {
		t.Error("docs miss the ssh row")
	}
}

func BenchmarkMatch(b *testing.B) {
	tab := testTable()
	paths := []string{"/home/u/project/src/main.go", "/home/u/.ssh/authorized_keys", "/tmp/build/out.o", "/etc/hosts"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tab.Match(paths[i%len(paths)], Write)
	}
}

func BenchmarkMatchPattern(b *testing.B) {
	tab := testTable()
	globs := []string{"/*0", "/home/u/.ss?/auth*", "/tmp/*.txt", "/work/*a*b*c*d*e*f/[a-z]*x?y*"}
	for _, g := range globs {
		b.Run(g, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tab.MatchPattern(g, Write)
			}
		})
	}
}
