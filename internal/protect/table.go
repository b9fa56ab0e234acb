package protect

import (
	"regexp"
	"sort"
)

// Class describes one class key of the table.
type Class struct {
	Key         string
	Description string
}

// Class keys. Keys are stable: grants, audit records and deny messages
// name them. Several are shared with the shell analyser's catalogue.
const (
	ClassDiskWrite     = "disk.write_device"
	ClassAgentConfig   = "write.agent_config"
	ClassShellRC       = "write.shell_rc"
	ClassSSH           = "write.ssh"
	ClassCredentials   = "write.credentials"
	ClassGitHooks      = "write.git_config"
	ClassAutostart     = "persist.autostart"
	ClassCron          = "persist.cron"
	ClassEnvWrite      = "write.env_file"
	ClassSystemConfig  = "write.system_config"
	ClassSystemDir     = "write.system_dir"
	ClassUserBin       = "persist.user_bin"
	ClassDevice        = "write.device"
	ClassReadSSH       = "read.ssh_key"
	ClassReadCreds     = "read.credentials"
	ClassReadEnv       = "read.env_file"
	ClassReadKey       = "read.private_key"
	ClassReadSystem    = "read.system_secret"
	ClassReadHistory   = "read.shell_history"
	ClassReadProcEnv   = "read.proc_environ"
	ClassReadKeychain  = "read.keychain"
	ClassReadAgentAuth = "read.agent_credentials"
)

var classes = map[string]string{
	ClassSelf:          "reads or writes warden's own state or configuration",
	ClassDiskWrite:     "write to a raw block device",
	ClassAgentConfig:   "write to an AI agent's settings or MCP configuration (can remove warden's hook)",
	ClassShellRC:       "write to a shell startup file",
	ClassSSH:           "write into ~/.ssh",
	ClassCredentials:   "write to a credential file",
	ClassGitHooks:      "write to git hooks or git configuration (runs code on git commands)",
	ClassAutostart:     "write an autostart entry, login script or user service",
	ClassCron:          "write a crontab or at spool",
	ClassEnvWrite:      "write to a project .env file",
	ClassSystemConfig:  "write into system configuration (/etc)",
	ClassSystemDir:     "write into a system directory",
	ClassUserBin:       "write into a directory on PATH (~/.local/bin, ~/bin): can shadow a system program",
	ClassDevice:        "write to a device file",
	ClassReadSSH:       "read an SSH private key",
	ClassReadCreds:     "read cloud, registry or tool credentials",
	ClassReadEnv:       "read a .env file (secrets)",
	ClassReadKey:       "read a private key or certificate store",
	ClassReadSystem:    "read system secrets (shadow passwords, sudoers)",
	ClassReadHistory:   "read a shell or database client history (often holds secrets)",
	ClassReadProcEnv:   "read a process's environment (holds its secrets)",
	ClassReadKeychain:  "read a keychain, keyring or password store",
	ClassReadAgentAuth: "read an AI agent's login credentials",
}

// Lookup returns the description of a class key.
func Lookup(key string) (Class, bool) {
	d, ok := classes[key]
	return Class{Key: key, Description: d}, ok
}

// Classes returns every class key of the table, sorted.
func Classes() []Class {
	out := make([]Class, 0, len(classes))
	for k, d := range classes {
		out = append(out, Class{Key: k, Description: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// blockDevice is the exact shape of raw block device names: the glob
// entries below only approximate it, so /dev/sdb-backup.img (a file) is
// not a disk while /dev/sdb1 and /dev/nvme0n1p2 are.
var blockDevice = regexp.MustCompile(`^/dev/(sd[a-z]+[0-9]*|hd[a-z][0-9]*|vd[a-z]+[0-9]*|xvd[a-z]+[0-9]*|nvme[0-9]+(n[0-9]+(p[0-9]+)?)?|mmcblk[0-9]+(p[0-9]+|boot[0-9]+)?|md[0-9]+(p[0-9]+)?|md/.+|dm-[0-9]+|loop[0-9]+(p[0-9]+)?|nbd[0-9]+(p[0-9]+)?|r?disk[0-9]+(s[0-9]+)?|sr[0-9]+|mapper/.+|disk/by-[a-z]+/.+|zd[0-9]+|rbd[0-9]+|bcache[0-9]+|mtdblock[0-9]+|ubd[a-z]+|ram[0-9]+)$`)

func isBlockDevice(lowPath string) bool { return blockDevice.MatchString(lowPath) }

// rows builds entries with one access, tier, class and description.
func rows(acc Access, tier Tier, class, why string, patterns ...string) []Entry {
	out := make([]Entry, len(patterns))
	for i, p := range patterns {
		out[i] = Entry{Pattern: p, Access: acc, Tier: tier, Class: class, Why: why}
	}
	return out
}

func builtin() []Entry {
	var t []Entry
	add := func(e ...Entry) { t = append(t, e...) }

	// warden's default locations, whatever the CLI resolved: an agent
	// may name them under another home or through XDG variables.
	add(rows(ReadWrite, Hardline, ClassSelf, "warden's own state or configuration (default locations)",
		".config/warden/**", ".local/state/warden/**", "/etc/warden/**",
		"Library/Application Support/warden/**")...)
	// warden's programs where they are installed: replaced (by /bin/true,
	// say), the hook an agent's tool calls pass through would no longer
	// judge them.
	add(rows(Write, Hardline, ClassSelf, "warden's own programs, where they are installed",
		"bin/warden", "bin/warden-hook")...)

	// Raw block devices.
	for _, p := range []string{"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/md*", "/dev/md/**",
		"/dev/dm-*", "/dev/loop*", "/dev/nbd*", "/dev/disk*", "/dev/rdisk*", "/dev/sr*", "/dev/mapper/**", "/dev/disk/**",
		"/dev/zd*", "/dev/rbd*", "/dev/bcache*", "/dev/mtdblock*", "/dev/ubd*", "/dev/ram*"} {
		add(Entry{Pattern: p, Access: Write, Tier: Hardline, Class: ClassDiskWrite, Why: "a raw block device", refine: isBlockDevice})
	}
	add(Entry{Pattern: "/dev/**", Access: Write, Tier: Dangerous, Class: ClassDevice, Why: "a device file",
		Except: []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/fd/*", "/dev/pts/*", "/dev/shm/**", "/dev/mqueue/**"}})

	// Other agents' settings and MCP client configurations: they can
	// remove warden's hook or add a server that runs anything.
	add(rows(Write, Floor, ClassAgentConfig, "an AI agent's settings (can remove warden's hook)",
		".claude/settings*.json", ".claude.json", ".claude.json.backup", ".mcp.json",
		".codex/**", ".gemini/**", ".hermes/**", ".cursor/**", ".windsurf/**", ".codeium/**", ".continue/**", ".aider.conf.yml",
		".config/Claude/**", "Library/Application Support/Claude/**", ".vscode/mcp.json", ".config/Code/User/mcp.json",
		"Library/Application Support/Code/User/mcp.json", ".config/opencode/**", ".opencode/**", ".config/goose/**", ".config/zed/settings.json",
		".amazonq/**", ".config/github-copilot/**")...)

	// Shell startup files.
	add(rows(Write, Floor, ClassShellRC, "a shell startup file (runs in every new shell)",
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bashrc.d/**", ".profile", ".zshrc", ".zprofile", ".zshenv",
		".zlogin", ".zlogout", ".zshrc.d/**", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".inputrc", ".config/fish/**",
		".config/nushell/**", ".config/powershell/**", ".oh-my-zsh/custom/**", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc",
		".pam_environment", ".config/environment.d/**", "/etc/profile", "/etc/profile.d/**", "/etc/bash.bashrc", "/etc/bashrc",
		"/etc/zsh/**", "/etc/zshrc", "/etc/zprofile", "/etc/zshenv", "/etc/environment")...)

	// SSH: authorized_keys, config (ProxyCommand), rc, keys.
	add(rows(Write, Floor, ClassSSH, "the SSH directory (authorized_keys, config, keys)", ".ssh/**", "/etc/ssh/**")...)

	// Credential stores.
	add(rows(Write, Floor, ClassCredentials, "a credential store (cloud, registry, token or key file)", credentialPaths...)...)
	add(rows(Write, Floor, ClassCredentials, "a credential store (cloud, registry, token or key file)",
		".gnupg/**", ".password-store/**", ".local/share/keyrings/**", "Library/Keychains/**", ".config/gh/**",
		".netrc", ".git-credentials", "/etc/sudoers", "/etc/sudoers.d/**", "/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/group")...)

	// Git: hooks and configuration run code on the next git command.
	add(rows(Write, Floor, ClassGitHooks, "git hooks or git configuration (run code on git commands)",
		".git/hooks/**", ".git/config", ".gitconfig", ".config/git/**", "/etc/gitconfig")...)

	// Autostart and services.
	add(rows(Write, Floor, ClassAutostart, "an autostart entry or user service",
		".config/autostart/**", ".config/systemd/**", ".local/share/systemd/**", "/etc/systemd/**", "/etc/xdg/autostart/**",
		"/lib/systemd/**", "/usr/lib/systemd/**", "/etc/init.d/**", "/etc/rc.local", "/etc/rc*.d/**",
		"Library/LaunchAgents/**", "/Library/LaunchAgents/**", "/Library/LaunchDaemons/**", "/System/Library/LaunchDaemons/**",
		".config/upstart/**", ".local/share/dbus-1/services/**", "/etc/udev/**", "/etc/ld.so.preload")...)

	// Crontabs and at jobs.
	add(rows(Write, Floor, ClassCron, "a crontab or at spool",
		"/var/spool/cron/**", "/var/spool/at/**", "/var/spool/atjobs/**", "/etc/crontab", "/etc/cron.*/**", "/etc/cron.d/**",
		"/etc/anacrontab", "/var/at/**", "/usr/lib/cron/tabs/**", "/private/var/at/**")...)

	// Project .env files hold secrets, and what they set reaches every
	// tool that loads them (NODE_OPTIONS, LD_PRELOAD).
	add(Entry{Pattern: ".env", Access: Write, Tier: Floor, Class: ClassEnvWrite, Why: "a .env file"},
		Entry{Pattern: ".env.*", Access: Write, Tier: Floor, Class: ClassEnvWrite, Why: "a .env file",
			Except: []string{".env.example", ".env.sample", ".env.template", ".env.dist"}})

	// PATH directories in the home: a program written there shadows a
	// system one in every later shell.
	add(rows(Write, Dangerous, ClassUserBin, "a directory on PATH in the home", ".local/bin/**", "/home/*/bin/**", "/root/bin/**", "/Users/*/bin/**")...)

	// System configuration and directories.
	add(rows(Write, Dangerous, ClassSystemConfig, "system configuration", "/etc/**", "/private/etc/**")...)
	add(rows(Write, Dangerous, ClassSystemDir, "a system directory",
		"/usr/**", "/bin/**", "/sbin/**", "/lib/**", "/lib32/**", "/lib64/**", "/libx32/**", "/boot/**", "/opt/**",
		"/var/lib/**", "/var/spool/**", "/sys/**", "/System/**", "/Library/**", "/Applications/**")...)
	// A process's open files are its own (/dev/stdout is /proc/self/fd/1).
	add(Entry{Pattern: "/proc/**", Access: Write, Tier: Dangerous, Class: ClassSystemDir, Why: "a system directory",
		Except: []string{"/proc/*/fd/*", "/proc/*/task/*/fd/*"}})

	// Secret reads: an agent that reads a secret can send it in its next
	// message.
	add(Entry{Pattern: ".ssh/**", Access: Read, Tier: Dangerous, Class: ClassReadSSH, Why: "SSH keys",
		Except: []string{".ssh/*.pub", ".ssh/known_hosts", ".ssh/known_hosts.old", ".ssh/authorized_keys", ".ssh/config", ".ssh", ".ssh/config.d/**"}})
	add(rows(Read, Dangerous, ClassReadSSH, "an SSH private key", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "/etc/ssh/ssh_host_*_key")...)
	add(rows(Read, Dangerous, ClassReadCreds, "a credential store (cloud, registry, token or key file)", credentialPaths...)...)
	add(rows(Read, Dangerous, ClassReadCreds, "a file holding credentials", secretFiles...)...)
	add(rows(Read, Dangerous, ClassReadCreds, "a credential store (cloud, registry, token or key file)",
		".netrc", "_netrc", ".git-credentials", ".config/gh/hosts.yml", ".config/hub", ".gnupg/**")...)
	add(Entry{Pattern: ".env", Access: Read, Tier: Dangerous, Class: ClassReadEnv, Why: "a .env file"},
		Entry{Pattern: ".env.*", Access: Read, Tier: Dangerous, Class: ClassReadEnv, Why: "a .env file",
			Except: []string{".env.example", ".env.sample", ".env.template", ".env.dist"}},
		Entry{Pattern: ".envrc", Access: Read, Tier: Dangerous, Class: ClassReadEnv, Why: "a direnv .envrc"})
	add(rows(Read, Dangerous, ClassReadKey, "a private key or key store",
		"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx", "*.ovpn")...)
	add(rows(Read, Dangerous, ClassReadSystem, "system secrets",
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/**", "/etc/security/opasswd",
		"/etc/ssl/private/**", "/etc/letsencrypt/**", "/var/lib/sss/**", "/etc/krb5.keytab", "/private/etc/master.passwd")...)
	add(rows(Read, Dangerous, ClassReadHistory, "a shell or client history",
		".bash_history", ".zsh_history", ".zhistory", ".history", ".sh_history", ".local/share/fish/fish_history", ".python_history",
		".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history", ".lesshst")...)
	add(rows(Read, Dangerous, ClassReadProcEnv, "a process environment", "/proc/*/environ", "/proc/*/task/*/environ")...)
	add(rows(Read, Dangerous, ClassReadKeychain, "a keychain, keyring or password store",
		"Library/Keychains/**", ".local/share/keyrings/**", ".password-store/**", ".config/Bitwarden CLI/**", ".config/op/**",
		".mozilla/**/logins.json", ".mozilla/**/key4.db", ".config/google-chrome/**/Login Data", ".config/chromium/**/Login Data",
		"Library/Application Support/Google/Chrome/**/Login Data")...)
	add(rows(Read, Dangerous, ClassReadAgentAuth, "an AI agent's login credentials",
		".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot/**",
		".local/share/opencode/auth.json", ".hermes/auth.json", ".aider.conf.yml")...)
	return t
}

// credentialPaths are files and directories holding credentials for
// clouds, clusters, registries and tools.
var credentialPaths = []string{
	".aws/**", ".config/gcloud/**", ".azure/**", ".kube/**", ".docker/config.json", ".config/containers/auth.json",
	"/run/containers/*/auth.json", ".pgpass", ".my.cnf", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".config/pip/pip.conf",
	".pip/pip.conf", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".m2/settings.xml", ".m2/settings-security.xml",
	".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config", ".composer/auth.json",
	".config/composer/auth.json", ".terraform.d/credentials.tfrc.json", ".terraformrc", ".vault-token", ".boto", ".s3cfg",
	".config/rclone/rclone.conf", ".config/doctl/**", ".config/hcloud/**", ".oci/**", ".config/heroku/**", ".netlify/**",
	".config/netlify/**", ".vercel/**", ".config/vercel/**", ".fly/**", ".config/flyctl/**", ".databrickscfg", ".snowsql/**",
	".config/snowflake/**", ".circleci/cli.yml", ".travis/config.yml", ".config/stripe/**", ".wrangler/**", ".config/wrangler/**",
	".huggingface/token", ".cache/huggingface/token", ".config/huggingface/**", ".kaggle/kaggle.json", ".ngrok2/**", ".config/ngrok/**",
	".config/sops/**", ".config/age/**", ".docker/.token_seed", ".minikube/**/*.key", ".talos/**", ".config/openstack/**",
	".credentials/**", ".secrets/**",
}

// secretFiles hold secrets to read but are written by the tools that
// own them in everyday work.
var secretFiles = []string{"credentials.json", "service-account*.json", "*.tfstate", "*.tfstate.backup"}
