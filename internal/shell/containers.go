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
	case "compose":
		c.composeVerb(rest)
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
		}
	case "run", "create":
		c.privileged(rest)
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

func (c *cmd) composeVerb(rest []Arg) {
	for i := 0; i < len(rest); i++ {
		v := rest[i].Value
		if strings.HasPrefix(v, "-") {
			if slicesHas([]string{"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory", "--ansi", "--parallel", "--progress"}, v) {
				i++
			}
			continue
		}
		switch v {
		case "down", "stop", "kill", "rm", "restart":
			c.find(clsContainerLife, c.span)
		case "exec", "run":
			// compose exec SERVICE CMD…: options, service, then the command.
			j := i + 1
			for j < len(rest) && strings.HasPrefix(rest[j].Value, "-") {
				if slicesHas([]string{"-e", "--env", "-u", "--user", "-w", "--workdir", "--index", "--name", "--entrypoint", "-p", "--publish", "-v", "--volume", "-l", "--label"}, rest[j].Value) {
					j++
				}
				j++
			}
			if j+1 < len(rest) {
				c.run(rest[j+1:], "compose "+v)
			}
		}
		return
	}
}

func ruleCompose(c *cmd) { c.composeVerb(c.args[1:]) }

// privileged flags run/create options that give the container the host.
func (c *cmd) privileged(rest []Arg) {
	for i, a := range rest {
		v := a.Value
		if !strings.HasPrefix(v, "-") {
			break // the image: the rest is its command
		}
		next := ""
		if i+1 < len(rest) {
			next = rest[i+1].Value
		}
		switch {
		case v == "--privileged" || v == "--privileged=true":
		case v == "--pid=host" || v == "--net=host" || v == "--network=host" || v == "--ipc=host" || v == "--userns=host" || v == "--uts=host" || v == "--cgroupns=host":
		case (v == "--pid" || v == "--net" || v == "--network" || v == "--ipc" || v == "--userns" || v == "--uts") && next == "host":
		case strings.HasPrefix(v, "--cap-add") && (strings.Contains(strings.ToUpper(v+" "+next), "ALL") || strings.Contains(strings.ToUpper(v+" "+next), "SYS_ADMIN") || strings.Contains(strings.ToUpper(v+" "+next), "SYS_PTRACE")):
		case strings.HasPrefix(v, "--security-opt") && strings.Contains(v+" "+next, "unconfined"):
		case strings.HasPrefix(v, "--device") && strings.Contains(v+" "+next, "/dev/"):
		case (v == "-v" || v == "--volume") && c.hostMount(next):
		case strings.HasPrefix(v, "--volume=") && c.hostMount(v[len("--volume="):]):
		case strings.HasPrefix(v, "-v") && len(v) > 2 && c.hostMount(v[2:]):
		case strings.HasPrefix(v, "--mount") && (strings.Contains(v+","+next+",", "source=/,") || strings.Contains(v+","+next+",", "src=/,") || strings.Contains(v+next, "docker.sock")):
		default:
			continue
		}
		c.find(clsContainerPriv, a.Span)
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

// ruleContainerExec: apptainer/singularity exec IMAGE CMD, toolbox run
// CMD, lxc exec C -- CMD, distrobox enter C -- CMD, flatpak run
// --command=CMD APP ARGS, and their shells.
func ruleContainerExec(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	sub := c.args[1].Value
	var ops []Arg
	var after []Arg
	for i := 2; i < len(c.args); i++ {
		if c.args[i].Value == "--" {
			after = c.args[i+1:]
			break
		}
		if !strings.HasPrefix(c.args[i].Value, "-") {
			ops = append(ops, c.args[i])
		}
	}
	switch c.name + " " + sub {
	case "apptainer exec", "singularity exec":
		// Options, the image, then the command.
		i := c.skipOptions(2, "B", "bind", "env", "env-file", "H", "home", "o", "overlay", "pwd", "W", "workdir", "security", "network",
			"network-args", "app", "fusemount", "mount", "scratch", "S", "hostname", "add-caps", "drop-caps", "config", "pid-file", "nv-ccli", "oci")
		if i+1 < len(c.args) {
			c.run(c.args[i+1:], c.name+" exec")
		}
	case "toolbox run":
		if i := c.skipOptions(2, "c", "container", "d", "distro", "r", "release"); i < len(c.args) {
			c.run(c.args[i:], "toolbox run")
		}
	case "lxc exec", "distrobox enter":
		if len(after) > 0 {
			c.run(after, c.name+" "+sub)
		}
	case "flatpak run":
		for _, a := range c.args[2:] {
			if v, ok := strings.CutPrefix(a.Value, "--command="); ok && len(ops) >= 1 {
				args := append([]Arg{{Value: v, Static: a.Static, Span: a.Span}}, ops[1:]...)
				c.run(args, "flatpak run --command")
			}
		}
	case "flatpak uninstall", "flatpak remove":
		c.find(clsPkgRemove, c.span)
	case "lxc delete", "lxc rm", "lxc stop", "distrobox rm", "distrobox stop", "toolbox rm", "toolbox rmi":
		c.find(clsContainerLife, c.span)
	}
}

// skipOptions returns the index of the first operand from argv[from],
// skipping options (those named take the next word) and "--".
func (c *cmd) skipOptions(from int, valued ...string) int {
	i := from
	for i < len(c.args) {
		v := c.args[i].Value
		if v == "--" {
			return i + 1
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			return i
		}
		if name := strings.TrimLeft(v, "-"); !strings.Contains(name, "=") && slicesHas(valued, name) {
			i++
		}
		i++
	}
	return i
}
