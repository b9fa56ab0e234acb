package shell

import (
	"path"
	"strings"
)

// The protected paths: one table that every way of touching a file is
// judged by (redirections, tee, cp, dd of=, sed -i, curl -o, tar -C, …,
// and through WriteClass the write tool and the hook's Write/Edit), so
// the same target gets the same class whichever writer is used.

// access is what a command does to a path.
type access uint8

const (
	accRead access = 1 << iota
	accWrite
)

// protEntry is one protected target.
type protEntry struct {
	// kind says how pattern matches: "prefix" (the path and everything
	// under it; "~" is the owner's home), "base" (a file name anywhere,
	// path.Match syntax), "segment" (anywhere a path holds it).
	kind, pattern string
	// read and write are the classes of reading and of writing it ("" for
	// none).
	read, write string
	// probes are example names under a prefix, tried against globs.
	probes []string
}

var sshKeyProbes = []string{"id_rsa", "id_ed25519", "id_ecdsa", "authorized_keys", "config"}

// protectedTable is the built-in table. Warden's own paths come first,
// from Options (see wardenEntries).
var protectedTable = []protEntry{
	{kind: "segment", pattern: "/.config/warden", read: clsWardenSelf, write: clsWardenSelf, probes: []string{"config.yaml"}},
	{kind: "segment", pattern: "/.local/state/warden", read: clsWardenSelf, write: clsWardenSelf, probes: []string{"warden.db", "admin.sock", "token"}},
	{kind: "prefix", pattern: "/etc/warden", read: clsWardenSelf, write: clsWardenSelf, probes: []string{"config.yaml"}},

	{kind: "prefix", pattern: "~/.claude", write: clsWriteAgentConfig, probes: []string{"settings.json", "settings.local.json"}},
	{kind: "base", pattern: ".claude.json", write: clsWriteAgentConfig},
	{kind: "segment", pattern: "/.claude/settings.json", write: clsWriteAgentConfig},
	{kind: "segment", pattern: "/.claude/settings.local.json", write: clsWriteAgentConfig},
	{kind: "base", pattern: ".mcp.json", write: clsWriteAgentConfig},
	{kind: "prefix", pattern: "~/.codex", write: clsWriteAgentConfig, probes: []string{"config.toml"}},
	{kind: "prefix", pattern: "~/.gemini", write: clsWriteAgentConfig, probes: []string{"settings.json"}},
	{kind: "segment", pattern: "/.gemini/settings.json", write: clsWriteAgentConfig},
	{kind: "prefix", pattern: "~/.hermes", write: clsWriteAgentConfig, probes: []string{"config.yaml"}},
	{kind: "prefix", pattern: "~/.cursor", write: clsWriteAgentConfig, probes: []string{"mcp.json"}},
	{kind: "segment", pattern: "/.cursor/mcp.json", write: clsWriteAgentConfig},
	{kind: "segment", pattern: "/.vscode/mcp.json", write: clsWriteAgentConfig},
	{kind: "prefix", pattern: "~/.config/Claude", write: clsWriteAgentConfig, probes: []string{"claude_desktop_config.json"}},
	{kind: "prefix", pattern: "~/Library/Application Support/Claude", write: clsWriteAgentConfig, probes: []string{"claude_desktop_config.json"}},

	{kind: "base", pattern: ".bashrc", write: clsWriteRC},
	{kind: "base", pattern: ".bash_profile", write: clsWriteRC},
	{kind: "base", pattern: ".bash_login", write: clsWriteRC},
	{kind: "base", pattern: ".bash_logout", write: clsWriteRC},
	{kind: "base", pattern: ".profile", write: clsWriteRC},
	{kind: "base", pattern: ".zshrc", write: clsWriteRC},
	{kind: "base", pattern: ".zprofile", write: clsWriteRC},
	{kind: "base", pattern: ".zshenv", write: clsWriteRC},
	{kind: "base", pattern: ".zlogin", write: clsWriteRC},
	{kind: "base", pattern: ".zlogout", write: clsWriteRC},
	{kind: "base", pattern: ".kshrc", write: clsWriteRC},
	{kind: "base", pattern: ".cshrc", write: clsWriteRC},
	{kind: "base", pattern: ".tcshrc", write: clsWriteRC},
	{kind: "base", pattern: ".login", write: clsWriteRC},
	{kind: "base", pattern: ".inputrc", write: clsWriteRC},
	{kind: "base", pattern: ".xprofile", write: clsWriteRC},
	{kind: "base", pattern: ".xinitrc", write: clsWriteRC},
	{kind: "base", pattern: ".pam_environment", write: clsWriteRC},
	{kind: "prefix", pattern: "~/.config/fish", write: clsWriteRC, probes: []string{"config.fish"}},
	{kind: "prefix", pattern: "/etc/profile.d", write: clsWriteRC, probes: []string{"x.sh"}},
	{kind: "prefix", pattern: "/etc/profile", write: clsWriteRC},
	{kind: "prefix", pattern: "/etc/bash.bashrc", write: clsWriteRC},

	{kind: "segment", pattern: "/.ssh", write: clsWriteSSH, probes: sshKeyProbes},
	{kind: "prefix", pattern: "~/.ssh", write: clsWriteSSH, probes: sshKeyProbes},
	{kind: "base", pattern: "id_rsa", read: clsSecretRead},
	{kind: "base", pattern: "id_dsa", read: clsSecretRead},
	{kind: "base", pattern: "id_ecdsa", read: clsSecretRead},
	{kind: "base", pattern: "id_ed25519", read: clsSecretRead},
	{kind: "base", pattern: "id_ecdsa_sk", read: clsSecretRead},
	{kind: "base", pattern: "id_ed25519_sk", read: clsSecretRead},
	{kind: "base", pattern: "ssh_host_*_key", read: clsSecretRead},

	{kind: "base", pattern: ".netrc", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: "_netrc", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".pgpass", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".npmrc", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".yarnrc.yml", write: clsWriteCreds},
	{kind: "base", pattern: ".pypirc", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".git-credentials", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".boto", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".s3cfg", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".my.cnf", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".dockercfg", read: clsSecretRead, write: clsWriteCreds},
	{kind: "base", pattern: ".vault-token", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.aws", read: clsSecretRead, write: clsWriteCreds, probes: []string{"credentials", "config"}},
	{kind: "prefix", pattern: "~/.aws", read: clsSecretRead, write: clsWriteCreds, probes: []string{"credentials", "config"}},
	{kind: "segment", pattern: "/.config/gcloud", read: clsSecretRead, write: clsWriteCreds, probes: []string{"credentials.db", "application_default_credentials.json"}},
	{kind: "segment", pattern: "/.azure", read: clsSecretRead, write: clsWriteCreds, probes: []string{"accessTokens.json", "msal_token_cache.json"}},
	{kind: "segment", pattern: "/.kube", read: clsSecretRead, write: clsWriteCreds, probes: []string{"config"}},
	{kind: "segment", pattern: "/.docker/config.json", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.gnupg", read: clsSecretRead, write: clsWriteCreds, probes: []string{"private-keys-v1.d", "secring.gpg"}},
	{kind: "segment", pattern: "/.config/gh/hosts.yml", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.config/hub", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.terraform.d/credentials.tfrc.json", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.cargo/credentials", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.cargo/credentials.toml", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.gem/credentials", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.config/rclone/rclone.conf", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.password-store", read: clsSecretRead, write: clsWriteCreds, probes: []string{"x.gpg"}},
	{kind: "segment", pattern: "/Library/Keychains", read: clsSecretRead, write: clsWriteCreds, probes: []string{"login.keychain-db"}},
	{kind: "segment", pattern: "/.local/share/keyrings", read: clsSecretRead, write: clsWriteCreds, probes: []string{"login.keyring"}},
	{kind: "segment", pattern: "/.oci/config", read: clsSecretRead, write: clsWriteCreds},
	{kind: "segment", pattern: "/.config/doctl/config.yaml", read: clsSecretRead, write: clsWriteCreds},
	{kind: "prefix", pattern: "/etc/shadow", read: clsSecretRead, write: clsWriteSystem},
	{kind: "prefix", pattern: "/etc/gshadow", read: clsSecretRead, write: clsWriteSystem},
	{kind: "prefix", pattern: "/etc/ssl/private", read: clsSecretRead, write: clsWriteSystem, probes: []string{"x.key"}},
	{kind: "base", pattern: ".env", read: clsSecretRead, write: clsWriteEnv},
	{kind: "base", pattern: ".env.*", read: clsSecretRead, write: clsWriteEnv},

	{kind: "segment", pattern: "/.git/hooks", write: clsWriteGitHooks, probes: []string{"pre-commit", "post-checkout"}},
	{kind: "segment", pattern: "/.git/config", write: clsWriteGitHooks},

	{kind: "prefix", pattern: "~/.config/autostart", write: clsWritePersist, probes: []string{"x.desktop"}},
	{kind: "prefix", pattern: "~/.config/systemd/user", write: clsWritePersist, probes: []string{"x.service", "x.timer"}},
	{kind: "prefix", pattern: "~/.local/share/systemd/user", write: clsWritePersist, probes: []string{"x.service"}},
	{kind: "prefix", pattern: "~/Library/LaunchAgents", write: clsWritePersist, probes: []string{"x.plist"}},
	{kind: "prefix", pattern: "/Library/LaunchAgents", write: clsWritePersist, probes: []string{"x.plist"}},
	{kind: "prefix", pattern: "/Library/LaunchDaemons", write: clsWritePersist, probes: []string{"x.plist"}},
	{kind: "prefix", pattern: "/etc/systemd/system", write: clsWritePersist, probes: []string{"x.service"}},
	{kind: "prefix", pattern: "/etc/systemd/user", write: clsWritePersist, probes: []string{"x.service"}},
	{kind: "prefix", pattern: "/etc/cron.d", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/cron.hourly", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/cron.daily", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/cron.weekly", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/cron.monthly", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/crontab", write: clsWritePersist},
	{kind: "prefix", pattern: "/var/spool/cron", write: clsWritePersist, probes: []string{"crontabs"}},
	{kind: "prefix", pattern: "/etc/init.d", write: clsWritePersist, probes: []string{"x"}},
	{kind: "prefix", pattern: "/etc/rc.local", write: clsWritePersist},

	{kind: "prefix", pattern: "/etc", write: clsWriteSystem, probes: []string{"hosts", "passwd", "sudoers"}},
	{kind: "prefix", pattern: "/private/etc", write: clsWriteSystem, probes: []string{"hosts"}},
}

// envExamples are .env.* files that hold no secrets by convention.
var envExamples = map[string]bool{".env.example": true, ".env.sample": true, ".env.template": true, ".env.dist": true, ".env.defaults": true}

// shadowNames are system commands a program in ~/.local/bin or ~/bin
// must not be named after (it would run instead of them).
var shadowNames = map[string]bool{"sudo": true, "su": true, "ls": true, "cat": true, "git": true, "ssh": true, "scp": true, "python": true,
	"python3": true, "node": true, "npm": true, "pip": true, "pip3": true, "bash": true, "sh": true, "zsh": true, "curl": true, "wget": true,
	"cd": true, "rm": true, "cp": true, "mv": true, "grep": true, "find": true, "env": true, "which": true, "docker": true, "kubectl": true,
	"make": true, "go": true, "cargo": true, "gpg": true, "passwd": true, "login": true, "id": true, "ps": true, "kill": true, "warden": true,
	"claude": true, "codex": true, "gemini": true, "code": true, "vim": true, "nano": true, "less": true, "head": true, "tail": true}

// wardenPaths are warden's own paths for this analysis: the ones the
// caller gave (config file, state directory) and the default places under
// the owner's home and XDG directories.
func (w *walker) wardenPaths() []string {
	if w.wardenCache != nil {
		return w.wardenCache
	}
	out := []string{}
	for _, p := range w.opts.ProtectedPaths {
		if p != "" {
			out = append(out, path.Clean(p))
		}
	}
	if h := w.home(); h != "" {
		out = append(out, h+"/.config/warden", h+"/.local/state/warden")
	}
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if x := w.opts.Env[v]; strings.HasPrefix(x, "/") {
			out = append(out, path.Clean(x)+"/warden")
		}
	}
	if x := w.opts.Env["WARDEN_STATE"]; strings.HasPrefix(x, "/") {
		out = append(out, path.Clean(x))
	}
	w.wardenCache = out
	return out
}

// pathClass returns the class of accessing the resolved path p, and the
// entry's pattern for the finding's detail. For a read, only warden's own
// paths and secrets count.
func (w *walker) pathClass(p string, acc access) (string, string) {
	if p == "" {
		return "", ""
	}
	for _, wp := range w.wardenPaths() {
		if p == wp || strings.HasPrefix(p, wp+"/") {
			return clsWardenSelf, wp
		}
	}
	if procMem.MatchString(p) {
		return clsProcMem, p
	}
	if acc&accWrite != 0 {
		switch {
		case isRawDevice(p) || devicePattern(p):
			return clsDiskWrite, p
		case p == "/proc/sysrq-trigger":
			return clsShutdown, p
		}
	}
	home := w.home()
	base := path.Base(p)
	best, detail := "", ""
	for i := range protectedTable {
		e := &protectedTable[i]
		if !e.matches(p, base, home) {
			continue
		}
		cls := e.read
		if acc&accWrite != 0 {
			cls = e.write
		}
		if cls == clsSecretRead && envExamples[base] {
			continue
		}
		if rank(cls) > rank(best) {
			best, detail = cls, e.pattern
		}
	}
	if best == "" && acc&accWrite != 0 {
		if shadow(p, home) {
			return clsPathShadow, p
		}
	}
	return best, detail
}

// rank orders classes of one path: the stronger wins.
func rank(cls string) int {
	if cls == "" {
		return 0
	}
	switch catalog[cls].Tier {
	case TierHardline:
		return 4
	case TierFloor:
		return 3
	}
	return 2
}

// matches reports whether the resolved path p is e's target.
func (e *protEntry) matches(p, base, home string) bool {
	switch e.kind {
	case "base":
		ok, _ := path.Match(e.pattern, base)
		return ok
	case "segment":
		return strings.Contains(p+"/", e.pattern+"/") || strings.HasPrefix(p, e.pattern[1:]+"/") || p == e.pattern[1:]
	}
	pat := e.pattern
	if strings.HasPrefix(pat, "~") {
		if strings.HasPrefix(p, "~") {
			// A symbolic home matches the symbolic pattern.
		} else if home != "" {
			pat = home + pat[1:]
		} else {
			return false
		}
	}
	return p == pat || strings.HasPrefix(p, pat+"/")
}

// shadow reports a file put in ~/.local/bin or ~/bin under the name of a
// system command.
func shadow(p, home string) bool {
	dir, base := path.Dir(p), path.Base(p)
	if !shadowNames[base] {
		return false
	}
	for _, d := range []string{"~/.local/bin", "~/bin"} {
		if dir == d || home != "" && dir == home+d[1:] {
			return true
		}
	}
	return false
}

// patternClass returns the strongest class of accessing any protected
// path the glob pattern could match.
func (w *walker) patternClass(g string, acc access) (string, string) {
	home := w.home()
	best, detail := "", ""
	try := func(p string) {
		if !globMatch(g, p) {
			return
		}
		if cls, d := w.pathClass(p, acc); rank(cls) > rank(best) {
			best, detail = cls, d
		}
	}
	for _, wp := range w.wardenPaths() {
		for _, probe := range []string{"", "/config.yaml", "/warden.db", "/admin.sock", "/token"} {
			try(wp + probe)
		}
	}
	dir := path.Dir(g)
	for i := range protectedTable {
		e := &protectedTable[i]
		switch e.kind {
		case "base":
			// A dot file anywhere: try it in the glob's own directory
			// (only a pattern that starts with "." can match one). Other
			// names are protected where they live (~/.ssh/id_rsa), not in
			// every directory a glob may list.
			if !strings.HasPrefix(e.pattern, ".") {
				continue
			}
			name := strings.ReplaceAll(strings.ReplaceAll(e.pattern, "*", "x"), "?", "x")
			try(path.Join(dir, name))
		case "segment":
			// The protected name itself in the glob's directory (~/.* can
			// be ~/.ssh), or, when the directory is already inside it
			// (~/.ssh/*), the files it holds.
			try(path.Join(dir, path.Base(e.pattern)))
			if e.matches(dir, path.Base(dir), home) {
				for _, pr := range e.probes {
					try(path.Join(dir, pr))
				}
			}
		default:
			root := e.pattern
			if strings.HasPrefix(root, "~") {
				if home == "" {
					if !strings.HasPrefix(g, "~") {
						continue
					}
				} else {
					root = home + root[1:]
				}
			}
			try(root)
			for _, pr := range e.probes {
				try(root + "/" + pr)
			}
		}
	}
	if acc&accWrite != 0 && devicePattern(g) {
		return clsDiskWrite, g
	}
	return best, detail
}

// WriteClass returns the catalogue class of writing to the absolute path
// p, or "" for an ordinary path. It is the table that every shell writer
// is judged by, so the write tool and a shell redirect agree.
func (o Options) WriteClass(p string) string {
	w := &walker{opts: o}
	cls, _ := w.pathClass(w.absPath(p), accWrite)
	return cls
}

// ReadClass returns the class of reading the absolute path p ("" for an
// ordinary path).
func (o Options) ReadClass(p string) string {
	w := &walker{opts: o}
	cls, _ := w.pathClass(w.absPath(p), accRead)
	return cls
}

// globMatch matches a path against a pattern as bash does without
// dotglob: component by component, a leading "." matched only by a
// literal one.
func globMatch(pattern, name string) bool {
	pc := strings.Split(pattern, "/")
	nc := strings.Split(name, "/")
	if len(pc) != len(nc) {
		return false
	}
	for i := range pc {
		if strings.HasPrefix(nc[i], ".") && !strings.HasPrefix(pc[i], ".") {
			return false
		}
		if ok, _ := path.Match(pc[i], nc[i]); !ok {
			return false
		}
	}
	return true
}
