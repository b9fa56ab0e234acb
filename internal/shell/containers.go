package shell

import "strings"

// Family containers: lifecycle (stop, kill, remove), privileged or
// host-mounting containers, pointing the client at another daemon, and
// exec, whose command runs inside and is judged like any other.

var _ = family(func() {
	register("containers", ruleDocker, "docker", "podman", "nerdctl")
	register("containers", ruleCompose, "docker-compose", "podman-compose")
	register("containers", ruleContainerExec, "apptainer", "singularity", "toolbox", "lxc", "distrobox", "flatpak")
})

var dockerGlobal = spec("+!", "H|host=", "c|context=", "config=", "D|debug", "l|log-level=", "tls", "tlscacert=", "tlscert=", "tlskey=",
	"tlsverify", "v|version", "h|help", "url=", "connection=", "identity=", "r|remote", "root=", "runroot=", "storage-driver=",
	"storage-opt=", "cgroup-manager=", "log-level=", "events-backend=", "runtime=", "syslog", "module=", "network-cmd-path=", "tmpdir=",
	"volumepath=", "imagestore=", "out=", "transient-store", "ssh=", "cni-config-dir=", "conmon=", "hooks-dir=", "namespace|n=",
	"address|a=", "snapshotter=", "cgroup-manager=", "insecure-registry=", "hosts-dir=", "experimental", "host-gateway-ip=")

var dockerExecSpec = spec("+!", "d|detach", "detach-keys=", "e|env=", "env-file=", "i|interactive", "privileged", "t|tty", "u|user=",
	"w|workdir=", "preserve-fds=", "latest|l")

// ruleDocker: global options (another daemon: -H, --context), then the
// subcommand.
func ruleDocker(c *cmd) {
	g := c.parse(dockerGlobal)
	if g.has("H", "c", "url", "connection", "identity", "r", "address") {
		c.find(clsContainerDaemon, c.span)
	}
	if len(g.operands) == 0 {
		return
	}
	sub := g.operands[0].Value
	restStart := g.end + 1
	rest := c.args[restStart:]
	first := ""
	if len(rest) > 0 {
		first = rest[0].Value
	}
	switch sub {
	case "context":
		if first == "use" {
			c.find(clsContainerDaemon, c.span)
		}
	case "stop", "kill", "rm", "rmi", "restart", "prune":
		c.find(clsContainerLife, c.span)
	case "push":
		c.findDetail(clsPkgPublish, c.span, c.name+" push")
	case "compose":
		c.composeVerb(restStart)
	case "system":
		if slicesHas([]string{"prune", "reset", "rm", "remove", "kill", "stop", "restart"}, first) {
			c.find(clsContainerLife, c.span)
		}
	case "container", "image", "volume", "network", "builder", "buildx", "pod", "machine", "secret", "manifest":
		switch first {
		case "prune", "rm", "remove", "kill", "stop", "restart", "reset":
			c.find(clsContainerLife, c.span)
		case "exec":
			c.dockerExec(restStart + 1)
		case "run", "create":
			c.privileged(restStart + 1)
		case "push":
			c.findDetail(clsPkgPublish, c.span, c.name+" "+sub+" push")
		case "build":
			if hasWord(c.args, "--push") || hasPrefixWord(c.args, "--output=type=registry", "--output type=registry") {
				c.findDetail(clsPkgPublish, c.span, c.name+" "+sub+" build --push")
			}
		}
	case "run", "create":
		c.privileged(restStart)
	case "exec":
		c.dockerExec(restStart)
	case "cp":
		// docker cp SRC DEST: a local destination is written.
		var ops []Arg
		for _, a := range rest {
			if !strings.HasPrefix(a.Value, "-") {
				ops = append(ops, a)
			}
		}
		if len(ops) == 2 && !strings.Contains(ops[1].Value, ":") {
			c.writes(ops[1:])
		}
	}
}

// dockerExec runs the command of docker exec [opts] CONTAINER CMD….
func (c *cmd) dockerExec(from int) {
	p := parseOpts(dockerExecSpec, c.args, from)
	if len(p.unknown) > 0 {
		u := c.args[p.unknown[0]]
		c.opaqueDetail(u.Span, "option "+u.Value+" of "+c.name+" exec is not known")
	}
	if len(p.operands) >= 2 {
		c.run(p.operands[1:], c.name+" exec")
	}
}

var (
	composeGlobal = spec("+!", "f|file=", "p|project-name=", "profile=", "env-file=", "project-directory=", "ansi=", "parallel=",
		"progress=", "compatibility", "dry-run", "all-resources", "no-ansi", "verbose", "log-level=", "H|host=", "context=", "tls",
		"skip-hostname-check", "h|help", "v|version")
	composeExec = spec("+!", "d|detach", "dry-run", "e|env=", "index=", "T|no-TTY|no-tty", "privileged", "u|user=", "w|workdir=",
		"i|interactive", "t|tty", "h|help")
	composeRun = spec("+!", "build", "cap-add=", "cap-drop=", "d|detach", "entrypoint=", "e|env=", "env-from-file=", "i|interactive",
		"l|label=", "name=", "T|no-TTY|no-tty", "no-deps", "p|publish=", "pull=", "quiet", "quiet-build", "quiet-pull", "remove-orphans",
		"rm", "P|service-ports", "use-aliases", "u|user=", "v|volume=", "w|workdir=", "t|tty", "h|help")
)

// composeVerb reads compose's global options, then its verb: down, stop,
// kill, rm and restart are lifecycle; exec and run run their command in
// a service's container (run's --entrypoint replaces the program).
func (c *cmd) composeVerb(from int) {
	g := parseOpts(composeGlobal, c.args, from)
	if len(g.operands) == 0 {
		return
	}
	switch verb := g.operands[0].Value; verb {
	case "down", "stop", "kill", "rm", "restart":
		c.find(clsContainerLife, c.span)
	case "exec", "run":
		sp := composeExec
		if verb == "run" {
			sp = composeRun
		}
		p := parseOpts(sp, c.args, g.end+1)
		c.explain(&p)
		if len(p.unknown) > 0 {
			u := c.args[p.unknown[0]]
			c.opaqueDetail(u.Span, "option "+u.Value+" of compose "+verb+" is not known: what it runs cannot be read")
		}
		if len(p.operands) == 0 {
			return
		}
		cmdArgs := p.operands[1:] // after the service
		if e, ok := p.value("entrypoint"); ok {
			cmdArgs = append([]Arg{e}, cmdArgs...)
		}
		if len(cmdArgs) > 0 {
			c.run(cmdArgs, "compose "+verb)
		}
		if p.has("privileged") {
			c.find(clsContainerPriv, c.span)
		}
		for _, v := range p.values("v") {
			if c.hostMount(v.Value) {
				c.findDetail(clsContainerPriv, v.Span, "--volume "+v.Value)
			}
		}
	}
}

func ruleCompose(c *cmd) { c.composeVerb(1) }

// dockerRunSpec reads docker (podman, nerdctl) run and create: pflag
// style, no abbreviations, short flags bundled (-itv/:/h).
var dockerRunSpec = spec("+!", "a|attach=", "add-host=", "annotation=", "blkio-weight=", "blkio-weight-device=", "cap-add=", "cap-drop=",
	"cgroup-parent=", "cgroupns=", "cidfile=", "cpu-period=", "cpu-quota=", "cpu-rt-period=", "cpu-rt-runtime=", "c|cpu-shares=", "cpus=",
	"cpuset-cpus=", "cpuset-mems=", "d|detach", "detach-keys=", "device=", "device-cgroup-rule=", "device-read-bps=", "device-read-iops=",
	"device-write-bps=", "device-write-iops=", "disable-content-trust", "dns=", "dns-option=", "dns-search=", "domainname=",
	"entrypoint=", "e|env=", "env-file=", "expose=", "gpus=", "group-add=", "health-cmd=", "health-interval=", "health-retries=",
	"health-start-period=", "health-timeout=", "help", "h|hostname=", "init", "i|interactive", "ip=", "ip6=", "ipc=", "isolation=",
	"kernel-memory=", "l|label=", "label-file=", "link=", "link-local-ip=", "log-driver=", "log-opt=", "mac-address=", "m|memory=",
	"memory-reservation=", "memory-swap=", "memory-swappiness=", "mount=", "name=", "net|network=", "net-alias|network-alias=",
	"no-healthcheck", "oom-kill-disable", "oom-score-adj=", "pid=", "pids-limit=", "platform=", "privileged?", "p|publish=",
	"P|publish-all", "pull=", "q|quiet", "read-only", "restart=", "rm", "runtime=", "security-opt=", "shm-size=", "sig-proxy?",
	"stop-signal=", "stop-timeout=", "storage-opt=", "sysctl=", "tmpfs=", "t|tty", "ulimit=", "u|user=", "userns=", "uts=",
	"v|volume=", "volume-driver=", "volumes-from=", "w|workdir=", "pod=", "replace", "systemd=", "arch=", "os=", "tz=", "secret=",
	"rootfs", "http-proxy?", "hostuser=", "passwd", "umask=", "group-entry=", "passwd-entry=", "personality=", "preserve-fds=",
	"requires=", "sdnotify=", "seccomp-policy=", "chrootdirs=", "image-volume=", "init-path=", "cgroup-conf=", "cgroups=",
	"conmon-pidfile=", "decryption-key=", "device-cgroup-rule=", "uidmap=", "gidmap=", "subuidname=", "subgidname=")

// privileged flags run/create options that give the container the host:
// --privileged, the host's namespaces, all or admin capabilities, no
// confinement, devices, and mounts of the host's root, its runtime
// socket, /etc or a home directory.
func (c *cmd) privileged(from int) {
	p := parseOpts(dockerRunSpec, c.args, from)
	c.explain(&p)
	for _, h := range p.hits {
		if h.def <= 0 {
			continue
		}
		d := dockerRunSpec.data().defs[h.def-1]
		name := d.names[len(d.names)-1]
		v := strings.ToLower(h.val.Value)
		priv := false
		switch name {
		case "privileged":
			priv = !h.hasVal || v == "true" || v == "1"
		case "pid", "network", "ipc", "userns", "uts", "cgroupns":
			priv = v == "host"
		case "cap-add":
			priv = strings.Contains(strings.ToUpper(v), "ALL") || strings.Contains(strings.ToUpper(v), "SYS_ADMIN") ||
				strings.Contains(strings.ToUpper(v), "SYS_PTRACE") || strings.Contains(strings.ToUpper(v), "SYS_MODULE") ||
				strings.Contains(strings.ToUpper(v), "DAC_READ_SEARCH")
		case "security-opt":
			priv = strings.Contains(v, "unconfined") || strings.Contains(v, "label=disable") || strings.Contains(v, "label:disable")
		case "device":
			priv = strings.Contains(v, "/dev/")
		case "volume":
			priv = c.hostMount(h.val.Value)
		case "mount":
			for _, kv := range strings.Split(h.val.Value, ",") {
				k, val, _ := strings.Cut(kv, "=")
				if (k == "source" || k == "src") && strings.HasPrefix(val, "/") && c.hostMount(val) {
					priv = true
				}
			}
		}
		if priv {
			c.findDetail(clsContainerPriv, c.args[h.at].Span, "--"+name+" "+h.val.Value)
		}
	}
}

// hostMount reports a bind mount of a host path that gives the container
// the host: the root, the docker socket, /etc, a home directory.
func (c *cmd) hostMount(spec string) bool {
	src, _, _ := strings.Cut(spec, ":")
	p := c.w.absPath(src)
	if !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "~") && !strings.HasPrefix(src, "$") {
		return false // a named volume
	}
	if strings.HasPrefix(src, "$") {
		if r, ok := c.w.expandVars(src); ok {
			p = c.w.absPath(r)
		}
	}
	if cls, _, _ := c.w.pathClass(p, accRead); cls == clsWardenSelf || isSecretRead(cls) {
		return true
	}
	return p == "/" || strings.HasSuffix(p, "docker.sock") || strings.HasSuffix(p, "podman.sock") || p == "/etc" || p == "/root" ||
		p == "/var/run" || p == "/run" || p == "~" || p == c.w.home() || p == "/home" || p == "/proc" || p == "/sys" || p == "/dev" ||
		strings.HasPrefix(p, "/etc/") || p == "/boot" || p == "/usr" || p == "/var" || p == "/Users"
}

var (
	apptainerExec = spec("+!", "B|bind=", "env=", "env-file=", "H|home=", "o|overlay=", "pwd=", "W|workdir=", "security=", "network=",
		"network-args=", "app=", "fusemount=", "mount=", "scratch=", "S", "hostname=", "add-caps=", "drop-caps=", "config=", "pid-file=",
		"nv-ccli", "nv", "rocm", "oci", "c|contain", "C|containall", "e|cleanenv", "i|ipc", "p|pid", "u|userns", "f|fakeroot", "writable",
		"writable-tmpfs", "no-home", "no-mount=", "no-privs", "keep-privs", "allow-setuid", "boot", "compat", "disable-cache", "no-init",
		"no-umask", "no-eval", "no-https", "no-net", "containlibs=", "dns=", "passphrase", "pem-path=", "userns", "uts", "h|help")
	toolboxRun  = spec("+!", "c|container=", "d|distro=", "r|release=", "preserve-fds=", "h|help")
	lxcExec     = spec("!", "env=", "n|mode=", "T|force-noninteractive", "t|force-interactive", "user=", "group=", "cwd=", "project=", "h|help")
	distroEnter = spec("!", "n|name=", "e|exec", "T|no-tty", "nw|no-workdir", "a|additional-flags=", "r|root", "d|dry-run", "v|verbose", "h|help", "V|version")
	flatpakRun  = spec("+!", "arch=", "command=", "cwd=", "branch=", "user", "system", "installation=", "runtime=", "runtime-version=",
		"commit=", "runtime-commit=", "devel", "log-session-bus", "log-system-bus", "log-a11y-bus", "no-a11y-bus", "a11y-bus",
		"no-session-bus", "session-bus", "no-documents-portal", "file-forwarding", "die-with-parent", "parent-pid=", "parent-expose-pids",
		"parent-share-pids", "instance-id-fd=", "share=", "unshare=", "socket=", "nosocket=", "device=", "nodevice=", "allow=",
		"disallow=", "filesystem=", "nofilesystem=", "add-policy=", "remove-policy=", "env=", "unset-env=", "env-fd=", "own-name=",
		"talk-name=", "no-talk-name=", "system-own-name=", "system-talk-name=", "system-no-talk-name=", "persist=", "sandbox", "p|verbose",
		"ostree-verbose", "h|help")
)

// ruleContainerExec: apptainer/singularity exec IMAGE CMD, toolbox run
// CMD, lxc exec C -- CMD, distrobox enter C -- CMD, flatpak run
// [--command=PROG] APP ARGS, and their removal verbs.
func ruleContainerExec(c *cmd) {
	g := parseOpts(plainSpec, c.args, 1)
	if len(g.operands) == 0 {
		return
	}
	sub := g.operands[0].Value
	from := g.end + 1
	run := func(sp *optSpec, skip int, dashOnly bool, how string) {
		p := parseOpts(sp, c.args, from)
		c.explain(&p)
		if len(p.unknown) > 0 {
			u := c.args[p.unknown[0]]
			c.opaqueDetail(u.Span, "option "+u.Value+" of "+how+" is not known: what it runs cannot be read")
		}
		ops := p.operands
		if dashOnly {
			ops = nil
			if p.dashdash >= 0 {
				ops = c.args[p.dashdash+1:]
			}
			skip = 0
		}
		if len(ops) <= skip {
			return
		}
		args := ops[skip:]
		if v, ok := p.value("command"); ok {
			args = append([]Arg{v}, args...) // flatpak run --command=PROG APP ARGS
		}
		if len(args) > 0 {
			c.run(args, how)
		}
	}
	switch c.name + " " + sub {
	case "apptainer exec", "singularity exec":
		run(apptainerExec, 1, false, c.name+" exec")
	case "toolbox run":
		run(toolboxRun, 0, false, "toolbox run")
	case "lxc exec":
		run(lxcExec, 0, true, "lxc exec")
	case "distrobox enter":
		run(distroEnter, 0, true, "distrobox enter")
	case "flatpak run":
		run(flatpakRun, 1, false, "flatpak run")
	case "flatpak uninstall", "flatpak remove":
		c.find(clsPkgRemove, c.span)
	case "lxc delete", "lxc rm", "lxc stop", "distrobox rm", "distrobox stop", "toolbox rm", "toolbox rmi":
		c.find(clsContainerLife, c.span)
	}
}
