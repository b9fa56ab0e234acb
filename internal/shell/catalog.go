package shell

import (
	"sort"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/codescan"
	"github.com/wardenhq/warden/internal/protect"
)

// Class describes one entry of the catalogue.
type Class struct {
	Key         string `json:"key"`
	Tier        Tier   `json:"tier"`
	Description string `json:"description"`
	// Family groups classes for people (docs, --catalogue): delete, disk,
	// git, …
	Family string `json:"family"`
	// Opaque marks what the analyser could not see into (a command
	// computed at run time, code it cannot read, content fetched or
	// decoded at run time): never allowed by a bypass or a prefix grant
	// (invariant 12).
	Opaque bool `json:"opaque,omitempty"`
}

// The catalogue's own classes, filled by def while the package loads
// (fullCatalog adds the protected-path table's). Keys are stable: grants, deny messages, audit records and
// golden files refer to them. It is the one place classes are defined;
// docs/analysis.md is generated from it (TestDocsCatalogue).
var catalog = map[string]Class{}

// def adds a class.
func def(family, key string, tier Tier, desc string) string {
	catalog[key] = Class{Key: key, Tier: tier, Description: desc, Family: family}
	return key
}

// opaque adds a class of something the analyser could not see into.
func opaque(family, key string, tier Tier, desc string) string {
	def(family, key, tier, desc)
	c := catalog[key]
	c.Opaque = true
	catalog[key] = c
	return key
}

// Hardline classes: always blocked.
var (
	clsDeleteRoot    = def("delete", "delete.root", TierHardline, "recursive delete of the root filesystem")
	clsDeleteSystem  = def("delete", "delete.system_dir", TierHardline, "recursive delete of a system directory")
	clsDeleteHome    = def("delete", "delete.home", TierHardline, "recursive delete of the home directory")
	clsPermSystem    = def("perms", "perm.system_recursive", TierHardline, "recursive permission or owner change of the root or a system directory")
	clsDiskFormat    = def("disk", "disk.format", TierHardline, "format a filesystem or disk")
	clsDiskWipe      = def("disk", "disk.wipe", TierHardline, "wipe a raw block device")
	clsDiskPartition = def("disk", "disk.partition", TierHardline, "rewrite or erase a disk's partition table")
	clsDiskVolume    = def("disk", "disk.destroy_volume", TierHardline, "destroy a storage pool, logical volume or encrypted volume")
	clsForkBomb      = def("process", "proc.fork_bomb", TierHardline, "fork bomb")
	clsKillAll       = def("process", "proc.kill_all", TierHardline, "kill every process")
	clsShutdown      = def("system", "sys.shutdown", TierHardline, "shut down or reboot the machine")
	clsWardenAdmin   = def("warden", "warden.admin", TierHardline, "runs warden's own policy or approval commands")
	clsExfilSecret   = def("network", "net.exfil_secret", TierHardline, "upload of a credential file (private key, cloud or registry credentials, token)")
)

// Dangerous classes: need approval.
var (
	clsDeleteRecursive  = def("delete", "delete.recursive", TierDangerous, "recursive delete")
	clsDeleteForce      = def("delete", "delete.force", TierDangerous, "forced delete")
	clsDeleteAbsolute   = def("delete", "delete.absolute", TierDangerous, "delete of an absolute path outside temporary directories")
	clsDeleteUnknown    = opaque("delete", "delete.unknown", TierDangerous, "delete of a path known only at run time: it could be a protected one")
	clsDeleteFind       = def("delete", "delete.find", TierDangerous, "find with -delete or -exec rm")
	clsDeleteXargs      = def("delete", "delete.xargs", TierDangerous, "xargs rm (deletes paths read from input)")
	clsPermWorld        = def("perms", "perm.world_writable", TierDangerous, "world-writable permissions")
	clsChownRoot        = def("perms", "perm.chown_root", TierDangerous, "recursive chown to root")
	clsDiskCopy         = def("disk", "disk.copy", TierDangerous, "disk copy with dd")
	clsSQLDrop          = def("sql", "sql.drop", TierDangerous, "SQL DROP")
	clsSQLTruncate      = def("sql", "sql.truncate", TierDangerous, "SQL TRUNCATE")
	clsSQLDeleteAll     = def("sql", "sql.delete_all", TierDangerous, "SQL DELETE without WHERE")
	clsSecretRead       = def("secrets", "secret.read", TierDangerous, "prints a secret (a token, a keychain entry, stored credentials)")
	clsService          = def("system", "service.stop", TierDangerous, "stop, restart, disable or mask a system service")
	clsForceKill        = def("process", "proc.force_kill", TierDangerous, "force kill processes")
	clsKillWarden       = def("process", "proc.kill_warden", TierDangerous, "kill warden itself")
	clsProcMem          = def("process", "proc.mem", TierDangerous, "access to another process's memory (/proc/*/mem, a debugger or tracer attached to it)")
	clsInlineCode       = opaque("exec", "exec.inline_code", TierDangerous, "interpreter code warden could not read completely (python -c, perl -e, node -e, a here-doc or pipe)")
	clsProgramOption    = def("exec", "exec.program_option", TierDangerous, "option that makes a tool run another program")
	clsDynamic          = opaque("exec", "exec.dynamic", TierDangerous, "dynamic execution: the command run cannot be known statically")
	clsStdinShell       = opaque("exec", "exec.stdin_shell", TierDangerous, "shell or interpreter reading commands from a pipe")
	clsRemotePipe       = opaque("remote", "remote.pipe_shell", TierDangerous, "pipe remote content to a shell or interpreter")
	clsRemoteProc       = opaque("remote", "remote.procsubst", TierDangerous, "execute a remote script via process substitution")
	clsRemoteSubst      = opaque("remote", "remote.cmdsubst", TierDangerous, "execute remote content via command substitution")
	clsDecodeExec       = opaque("remote", "remote.decode_exec", TierDangerous, "decode and execute (base64 -d | sh, xxd -r | sh)")
	clsChmodRun         = def("exec", "exec.chmod_run", TierDangerous, "chmod +x followed by immediate execution")
	clsWriteRun         = def("exec", "exec.write_run", TierDangerous, "writes a file and runs it in the same command line")
	clsUnknownProgram   = def("exec", "exec.unknown_program", TierDangerous, "a program not on the known-safe list (analysis.profile: strict)")
	clsGitForcePush     = def("git", "git.force_push", TierDangerous, "git force push")
	clsGitResetHard     = def("git", "git.reset_hard", TierDangerous, "git reset --hard (discards changes)")
	clsGitDiscard       = def("git", "git.discard", TierDangerous, "discards uncommitted work (checkout/restore of paths, switch --discard-changes, reset --merge/--keep)")
	clsGitClean         = def("git", "git.clean_force", TierDangerous, "git clean with force (deletes untracked files)")
	clsGitBranchDelete  = def("git", "git.branch_force_delete", TierDangerous, "git branch force delete")
	clsGitHistoryDelete = def("git", "git.history_delete", TierDangerous, "deletes stashes, tags, refs or reflog entries (stash drop/clear, tag -d, update-ref -d, reflog expire, gc --prune=now)")
	clsGitRewrite       = def("git", "git.history_rewrite", TierDangerous, "git history rewrite (filter-branch, filter-repo)")
	clsGitRemoteDelete  = def("git", "git.remote_delete", TierDangerous, "delete a remote branch or mirror-push")
	clsGitRemoteURL     = def("git", "git.remote_url", TierDangerous, "pushes to, or points a remote at, a URL the line names: the repository can leave for anywhere")
	clsGitConfigProgram = def("git", "git.config_program", TierDangerous, "git configuration that makes git run a program (hooks, aliases with !, core.* commands)")
	clsContainerLife    = def("containers", "container.lifecycle", TierDangerous, "stop, kill or remove containers, images or volumes")
	clsContainerDaemon  = def("containers", "container.daemon_redirect", TierDangerous, "point docker or podman at another daemon")
	clsContainerPriv    = def("containers", "container.privileged", TierDangerous, "privileged container or host namespace or root mount")
	clsInfraDestroy     = def("infra", "infra.destroy", TierDangerous, "destroy cloud or cluster resources (kubectl delete, terraform destroy)")
	clsPkgRemove        = def("packages", "pkg.remove", TierDangerous, "package removal")
	clsMetadata         = def("network", "net.metadata", TierDangerous, "cloud metadata endpoint access (instance credentials)")
	clsReverseShell     = def("network", "net.reverse_shell", TierDangerous, "reverse shell or network-attached shell")
	clsFirewallFlush    = def("network", "net.firewall_flush", TierDangerous, "flush firewall rules")
	clsUpload           = def("network", "net.upload", TierDangerous, "uploads local files or data to a remote host")
	clsEnvLoader        = def("env", "env.loader", TierDangerous, "sets a loader or interpreter path variable (LD_PRELOAD, PYTHONPATH, NODE_OPTIONS, …)")
	clsPrivShell        = def("privilege", "priv.sudo_shell", TierDangerous, "a root or another user's shell (sudo -s/-i, sudo sh, sudo su, doas sh, su)")
	clsSetuid           = def("privilege", "priv.setuid", TierDangerous, "makes a program setuid or setgid (runs as its owner)")
	clsAccount          = def("privilege", "priv.account", TierDangerous, "changes user accounts, passwords or group membership (sudo, wheel, docker)")
	clsHistoryErase     = def("system", "sys.history_erase", TierDangerous, "erases or disables shell history (hides what ran)")
	clsPersist          = def("persistence", "persist.schedule", TierDangerous, "installs something that runs later or at login (crontab, at, systemctl enable, autostart)")
	clsCrontabRemove    = def("persistence", "sched.crontab_remove", TierDangerous, "remove all cron jobs (crontab -r)")
	clsWinDelete        = def("windows", "win.delete", TierDangerous, "Windows recursive or forced delete")
	clsWinRemote        = opaque("windows", "win.remote_exec", TierDangerous, "Windows download and execute (iex (iwr …))")
	clsWinEncoded       = opaque("windows", "win.encoded_command", TierDangerous, "PowerShell encoded command")
	clsWinDisk          = def("windows", "win.disk", TierDangerous, "Windows disk format, wipe or backup deletion")
	clsWinProcess       = def("windows", "win.process_kill", TierDangerous, "Windows forced process or service stop")
	clsWinSystem        = def("windows", "win.system", TierDangerous, "Windows registry, boot or ACL change")
)

// Classes of what inline code does that no command expresses
// (internal/codescan's findings).
var (
	_ = opaque("code", codescan.ClassEval, TierDangerous, "code evaluates code it builds at run time")
	_ = def("code", codescan.ClassNative, TierDangerous, "code loads native code or calls the C library")
	_ = def("network", codescan.ClassNetwork, TierDangerous, "code opens a network connection")
)

// The protected-path table's classes (internal/protect) are the
// catalogue's too: a finding about a path carries the table's class and
// tier.
var (
	clsWardenSelf = protect.ClassSelf
	clsDiskWrite  = protect.ClassDiskWrite
)

// fullCatalog is the catalogue with the protected-path table's classes,
// built on first use: their tiers come from a table built for the
// purpose, which is not work for every binary that links the analyser.
var fullCatalog = sync.OnceValue(func() map[string]Class {
	all := make(map[string]Class, len(catalog)+64)
	for k, c := range catalog {
		all[k] = c
	}
	tiers := map[string]protect.Tier{}
	for _, e := range protect.New(protect.Paths{Extra: []string{"/x"}}).Entries() {
		if e.Tier > tiers[e.Class] {
			tiers[e.Class] = e.Tier
		}
	}
	for _, c := range protect.Classes() {
		if _, ok := all[c.Key]; ok {
			continue
		}
		fam := "protected paths"
		switch {
		case strings.HasPrefix(c.Key, "read."):
			fam = "secrets"
		case strings.HasPrefix(c.Key, "write."):
			fam = "writes"
		case strings.HasPrefix(c.Key, "persist."):
			fam = "persistence"
		case strings.HasPrefix(c.Key, "warden."):
			fam = "warden"
		case strings.HasPrefix(c.Key, "disk."):
			fam = "disk"
		}
		all[c.Key] = Class{Key: c.Key, Tier: tierOf(tiers[c.Key]), Description: c.Description, Family: fam}
	}
	return all
})

// Catalogue returns every class, sorted by key.
func Catalogue() []Class {
	all := fullCatalog()
	out := make([]Class, 0, len(all))
	for _, c := range all {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Lookup returns the class for a key.
func Lookup(key string) (Class, bool) {
	c, ok := fullCatalog()[key]
	return c, ok
}
