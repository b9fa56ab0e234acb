package shell

import "sort"

// Class describes one entry of the catalogue.
type Class struct {
	Key         string `json:"key"`
	Tier        Tier   `json:"tier"`
	Description string `json:"description"`
}

// The catalogue. Keys are stable: grants, deny messages, audit records and
// golden files refer to them.
var catalog = map[string]Class{}

func def(key string, tier Tier, desc string) string {
	catalog[key] = Class{Key: key, Tier: tier, Description: desc}
	return key
}

// Hardline classes: always blocked.
var (
	clsDeleteRoot   = def("delete.root", TierHardline, "recursive delete of the root filesystem")
	clsDeleteSystem = def("delete.system_dir", TierHardline, "recursive delete of a system directory")
	clsDeleteHome   = def("delete.home", TierHardline, "recursive delete of the home directory")
	clsPermSystem   = def("perm.system_recursive", TierHardline, "recursive permission or owner change of the root or a system directory")
	clsDiskFormat   = def("disk.format", TierHardline, "format a filesystem or disk")
	clsDiskWipe     = def("disk.wipe", TierHardline, "wipe a raw block device")
	clsDiskWrite    = def("disk.write_device", TierHardline, "write to a raw block device")
	clsForkBomb     = def("proc.fork_bomb", TierHardline, "fork bomb")
	clsKillAll      = def("proc.kill_all", TierHardline, "kill every process")
	clsShutdown     = def("sys.shutdown", TierHardline, "shut down or reboot the machine")
	clsWardenAdmin  = def("warden.admin", TierHardline, "runs warden's own policy or approval commands")
	clsWardenSelf   = def("warden.self_write", TierHardline, "writes warden's config, state or grants")
)

// Dangerous classes: need approval.
var (
	clsDeleteRecursive = def("delete.recursive", TierDangerous, "recursive delete")
	clsDeleteForce     = def("delete.force", TierDangerous, "forced delete")
	clsDeleteAbsolute  = def("delete.absolute", TierDangerous, "delete of an absolute path outside temporary directories")
	clsDeleteFind      = def("delete.find", TierDangerous, "find with -delete or -exec rm")
	clsDeleteXargs     = def("delete.xargs", TierDangerous, "xargs rm (deletes paths read from input)")
	clsGitClean        = def("git.clean_force", TierDangerous, "git clean with force (deletes untracked files)")
	clsPermWorld       = def("perm.world_writable", TierDangerous, "world-writable permissions")
	clsChownRoot       = def("perm.chown_root", TierDangerous, "recursive chown to root")
	clsDiskCopy        = def("disk.copy", TierDangerous, "disk copy with dd")
	clsSQLDrop         = def("sql.drop", TierDangerous, "SQL DROP")
	clsSQLTruncate     = def("sql.truncate", TierDangerous, "SQL TRUNCATE")
	clsSQLDeleteAll    = def("sql.delete_all", TierDangerous, "SQL DELETE without WHERE")
	clsWriteSystem     = def("write.system_config", TierDangerous, "write into system configuration (/etc)")
	clsWriteRC         = def("write.shell_rc", TierDangerous, "write to a shell startup file")
	clsWriteSSH        = def("write.ssh", TierDangerous, "write into ~/.ssh")
	clsWriteCreds      = def("write.credentials", TierDangerous, "write to a credential file")
	clsWriteEnv        = def("write.env_file", TierDangerous, "write to a project .env file")
	clsService         = def("service.stop", TierDangerous, "stop, restart, disable or mask a system service")
	clsForceKill       = def("proc.force_kill", TierDangerous, "force kill processes")
	clsKillWarden      = def("proc.kill_warden", TierDangerous, "kill warden itself")
	clsProcMem         = def("proc.mem", TierDangerous, "access to another process's memory (/proc/*/mem)")
	clsRemotePipe      = def("remote.pipe_shell", TierDangerous, "pipe remote content to a shell or interpreter")
	clsRemoteProc      = def("remote.procsubst", TierDangerous, "execute a remote script via process substitution")
	clsRemoteSubst     = def("remote.cmdsubst", TierDangerous, "execute remote content via command substitution")
	clsDecodeExec      = def("remote.decode_exec", TierDangerous, "decode and execute (base64 -d | sh, xxd -r | sh)")
	clsStdinShell      = def("exec.stdin_shell", TierDangerous, "shell or interpreter reading commands from a pipe")
	clsInlineCode      = def("exec.inline_code", TierDangerous, "interpreter inline code (python -c, perl -e, node -e, here-doc)")
	clsProgramOption   = def("exec.program_option", TierDangerous, "option that makes a tool run another program")
	clsDynamic         = def("exec.dynamic", TierDangerous, "dynamic execution: the command run cannot be known statically")
	clsChmodRun        = def("exec.chmod_run", TierDangerous, "chmod +x followed by immediate execution")
	clsGitForcePush    = def("git.force_push", TierDangerous, "git force push")
	clsGitResetHard    = def("git.reset_hard", TierDangerous, "git reset --hard (discards changes)")
	clsGitBranchDelete = def("git.branch_force_delete", TierDangerous, "git branch force delete")
	clsGitRewrite      = def("git.history_rewrite", TierDangerous, "git history rewrite (filter-branch, filter-repo)")
	clsGitRemoteDelete = def("git.remote_delete", TierDangerous, "delete a remote branch or mirror-push")
	clsContainerLife   = def("container.lifecycle", TierDangerous, "stop, kill or remove containers, images or volumes")
	clsContainerDaemon = def("container.daemon_redirect", TierDangerous, "point docker or podman at another daemon")
	clsContainerPriv   = def("container.privileged", TierDangerous, "privileged container or host namespace or root mount")
	clsInfraDestroy    = def("infra.destroy", TierDangerous, "destroy cloud or cluster resources (kubectl delete, terraform destroy)")
	clsPkgRemove       = def("pkg.remove", TierDangerous, "package removal")
	clsMetadata        = def("net.metadata", TierDangerous, "cloud metadata endpoint access (instance credentials)")
	clsReverseShell    = def("net.reverse_shell", TierDangerous, "reverse shell or network-attached shell")
	clsFirewallFlush   = def("net.firewall_flush", TierDangerous, "flush firewall rules")
	clsEnvLoader       = def("env.loader", TierDangerous, "sets a loader or interpreter path variable (LD_PRELOAD, PYTHONPATH, NODE_OPTIONS, …)")
	clsSudoFlags       = def("priv.sudo_shell", TierDangerous, "sudo with shell, login, stdin or askpass flag")
	clsCrontabRemove   = def("sched.crontab_remove", TierDangerous, "remove all cron jobs (crontab -r)")
	clsWinDelete       = def("win.delete", TierDangerous, "Windows recursive or forced delete")
	clsWinRemote       = def("win.remote_exec", TierDangerous, "Windows download and execute (iex (iwr …))")
	clsWinEncoded      = def("win.encoded_command", TierDangerous, "PowerShell encoded command")
	clsWinDisk         = def("win.disk", TierDangerous, "Windows disk format, wipe or backup deletion")
	clsWinProcess      = def("win.process_kill", TierDangerous, "Windows forced process or service stop")
	clsWinSystem       = def("win.system", TierDangerous, "Windows registry, boot or ACL change")
)

// Catalogue returns every class, sorted by key.
func Catalogue() []Class {
	out := make([]Class, 0, len(catalog))
	for _, c := range catalog {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Lookup returns the class for a key.
func Lookup(key string) (Class, bool) {
	c, ok := catalog[key]
	return c, ok
}
