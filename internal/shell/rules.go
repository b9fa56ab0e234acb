package shell

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// addCatalogRules registers the checks of the catalogue.
func addCatalogRules() {
	add := func(f func(*cmd), names ...string) {
		for _, n := range names {
			rules[n] = f
		}
	}
	add(ruleRm, "rm")
	add(ruleDevice, "shred", "wipefs", "sgdisk", "blkdiscard", "mkswap")
	add(func(c *cmd) { c.find(clsDiskFormat, c.span) }, "mkfs", "mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "mkfs.minix", "mkfs.msdos", "mkdosfs", "mkntfs")
	add(ruleDiskutil, "diskutil")
	add(ruleDD, "dd")
	add(func(c *cmd) {
		p, _ := c.parse(opts{}, false)
		c.writes(p.operands)
	}, "tee", "truncate")
	add(ruleCopy, "cp", "mv", "install", "ln")
	add(ruleSed, "sed", "gsed")
	add(ruleChmod, "chmod")
	add(ruleChown, "chown", "chgrp")
	add(ruleKill, "kill")
	add(ruleKillByName, "pkill", "killall")
	add(ruleShutdown, "shutdown", "reboot", "halt", "poweroff")
	add(func(c *cmd) {
		if len(c.args) > 1 && (c.args[1].Value == "0" || c.args[1].Value == "6") {
			c.find(clsShutdown, c.span)
		}
	}, "init", "telinit")
	add(ruleSystemctl, "systemctl")
	add(func(c *cmd) {
		if len(c.args) > 2 && slicesHas([]string{"stop", "restart", "disable", "force-reload", "force-stop"}, c.args[2].Value) {
			c.find(clsService, c.span)
		}
	}, "service", "rc-service")
	add(func(c *cmd) {
		if len(c.args) > 1 && slicesHas([]string{"unload", "bootout", "stop", "remove", "kill", "disable"}, c.args[1].Value) {
			c.find(clsService, c.span)
		}
	}, "launchctl")
	add(func(c *cmd) {
		if p, _ := c.parse(opts{short: "u"}, false); p.has("-r", "--remove") {
			c.find(clsCrontabRemove, c.span)
		}
	}, "crontab")
	add(ruleFirewall, "iptables", "ip6tables", "nft", "ufw")
	add(ruleGit, "git")
	add(ruleDocker, "docker", "podman", "nerdctl")
	add(ruleCompose, "docker-compose", "podman-compose")
	add(ruleInfra, "kubectl", "helm", "terraform", "tofu", "pulumi", "aws", "gcloud", "az", "oc")
	add(rulePkg, "apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "microdnf", "pacman", "apk", "zypper", "snap", "flatpak", "brew", "port", "npm", "pnpm", "yarn", "pip", "pip3", "pipx", "uv", "poetry", "gem", "cargo", "conda", "mamba", "micromamba", "nix-env")
	add(ruleNet, "curl", "wget", "http", "https", "xh", "httpie", "aria2c", "lynx", "w3m", "links", "fetch", "telnet", "ftp", "tftp")
	add(ruleNetcat, "nc", "ncat", "netcat", "socat")
	add(ruleSQL, "psql", "mysql", "mariadb", "sqlite3", "clickhouse-client", "cockroach", "duckdb")
	add(ruleWarden, "warden")
	add(func(c *cmd) { c.staticOutput() }, "echo", "printf")
	add(func(c *cmd) {
		if c.in.kind == stdinText && c.in.static && len(c.args) == 1 {
			c.w.meta[c.idx].output, c.w.meta[c.idx].hasOut = c.in.text, true
		}
	}, "cat")
	add(ruleRg, "rg")
	add(func(c *cmd) { c.optionProgram(opts{long: []string{"--compress-program"}}, "--compress-program") }, "sort")
	add(func(c *cmd) { c.optionProgram(opts{long: []string{"--pager"}}, "--pager") }, "ag")
	add(ruleMan, "man")
	add(ruleTar, "tar", "gtar", "bsdtar")
	add(func(c *cmd) {
		c.optionProgram(opts{long: []string{"-TT", "--unzip-command"}}, "-TT", "--unzip-command")
	}, "zip")
	add(ruleRsync, "rsync")
	add(func(c *cmd) { c.optionProgram(opts{short: "z"}, "-z") }, "tcpdump")
	add(func(c *cmd) { c.optionProgram(opts{short: "S"}, "-S") }, "scp", "sftp")
	add(ruleWinDelete, "remove-item", "del", "erase", "rd", "rmdir", "ri")
	add(ruleWinRemote, "iex", "invoke-expression")
	add(ruleWinFormat, "format")
	add(func(c *cmd) { c.find(clsWinDisk, c.span) }, "format-volume", "clear-disk", "diskpart", "initialize-disk")
	add(func(c *cmd) { c.winFlag(clsWinDisk, "/w") }, "cipher")
	add(func(c *cmd) { c.winVerb(clsWinDisk, "delete") }, "vssadmin", "wbadmin")
	add(func(c *cmd) { c.winFlag(clsWinProcess, "/f") }, "taskkill")
	add(func(c *cmd) { c.winFlag(clsWinProcess, "-force") }, "stop-process", "stop-service", "spps")
	add(func(c *cmd) { c.winVerb(clsWinProcess, "stop", "delete") }, "sc")
	add(func(c *cmd) { c.winVerb(clsWinSystem, "delete") }, "reg")
	add(func(c *cmd) { c.winFlag(clsWinSystem, "/set", "/delete", "/deletevalue") }, "bcdedit")
	add(ruleIcacls, "icacls")
	add(func(c *cmd) { c.winFlag(clsWinSystem, "-force") }, "remove-itemproperty")
	add(func(c *cmd) { c.winFlag(clsWinSystem, "bypass", "unrestricted") }, "set-executionpolicy")
	add(ruleCmdExe, "cmd")
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writes checks each path for a sensitive write.
func (c *cmd) writes(paths []Arg) {
	for _, p := range paths {
		if cls := c.w.sensitiveWrite(p.Value); cls != "" {
			c.find(cls, p.Span)
		}
	}
}

func ruleRm(c *cmd) {
	p, _ := c.parse(opts{}, false)
	recursive := p.has("-r", "-R", "--recursive")
	force := p.has("-f", "--force")
	if recursive {
		hard := false
		for _, op := range p.operands {
			if cls := deleteTarget(op); cls != "" {
				c.find(cls, op.Span)
				hard = true
			}
		}
		if hard {
			return
		}
		c.find(clsDeleteRecursive, c.span)
	}
	allTemp := len(p.operands) > 0
	for _, op := range p.operands {
		if !isTemp(op.Value) {
			allTemp = false
			if isAbs(cleanPath(op.Value)) {
				c.find(clsDeleteAbsolute, op.Span)
			}
		}
		if cls := c.w.sensitiveWrite(op.Value); cls == clsWardenSelf {
			c.find(cls, op.Span)
		}
	}
	if force && !allTemp {
		c.find(clsDeleteForce, c.span)
	}
}

func ruleDevice(c *cmd) {
	p, _ := c.parse(opts{short: "nstoOe"}, false)
	if c.name == "wipefs" && (p.has("-n", "--no-act") || !p.has("-a", "--all")) {
		return
	}
	if c.name == "sgdisk" && !p.has("-Z", "--zap-all", "-o", "--clear", "-z", "--zap") {
		return
	}
	for _, op := range p.operands {
		if isRawDevice(op.Value) {
			if c.name == "mkswap" || strings.HasPrefix(c.name, "newfs") {
				c.find(clsDiskFormat, op.Span)
			} else {
				c.find(clsDiskWipe, op.Span)
			}
		}
	}
}

func ruleDiskutil(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	v := strings.ToLower(c.args[1].Value)
	if strings.HasPrefix(v, "erase") || slicesHas([]string{"zerodisk", "randomdisk", "secureerase", "reformat", "partitiondisk"}, v) {
		c.find(clsDiskFormat, c.span)
	}
}

func ruleDD(c *cmd) {
	for _, a := range c.args[1:] {
		k, v, ok := strings.Cut(a.Value, "=")
		if !ok {
			continue
		}
		switch k {
		case "if":
			c.find(clsDiskCopy, a.Span)
		case "of":
			if cls := c.w.sensitiveWrite(v); cls != "" {
				c.find(cls, a.Span)
			}
		}
	}
}

func ruleCopy(c *cmd) {
	p, _ := c.parse(opts{short: "tSmogZ", long: []string{"--target-directory", "--suffix", "--mode", "--owner", "--group", "--backup"}}, false)
	if t, ok := p.get("-t"); ok {
		c.writes([]Arg{{Value: t, Span: c.span}})
		return
	}
	if t, ok := p.get("--target-directory"); ok {
		c.writes([]Arg{{Value: t, Span: c.span}})
		return
	}
	if len(p.operands) >= 2 || (c.name == "install" && len(p.operands) == 1 && p.has("-d")) {
		dst := p.operands[len(p.operands)-1]
		c.writes([]Arg{dst})
		if c.name == "mv" {
			for _, src := range p.operands[:len(p.operands)-1] {
				if deleteTarget(src) != "" {
					c.find(deleteTarget(src), src.Span)
				}
			}
		}
	}
}

func ruleSed(c *cmd) {
	inPlace := false
	script := true
	var files []Arg
	for i := 1; i < len(c.args); i++ {
		a := c.args[i].Value
		switch {
		case a == "-e" || a == "-f" || a == "--expression" || a == "--file":
			script = false
			i++
		case strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-i"):
			inPlace = true
		case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			script = false
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			if strings.ContainsRune(a, 'i') {
				inPlace = true
			}
			if strings.ContainsAny(a, "ef") {
				script = false
				i++
			}
		default:
			if script {
				script = false
				continue
			}
			files = append(files, c.args[i])
		}
	}
	if inPlace {
		c.writes(files)
	}
}

var numericMode = regexp.MustCompile(`^[0-7]{3,4}$`)

func ruleChmod(c *cmd) {
	p, _ := c.parse(opts{long: []string{"--reference"}}, false)
	if len(p.operands) == 0 {
		return
	}
	mode := p.operands[0].Value
	targets := p.operands[1:]
	// chmod -w file puts a mode where an option would be.
	for _, f := range p.flags {
		if f.name == "-w" || f.name == "-x" || f.name == "-r" {
			mode, targets = f.name, p.operands
		}
	}
	if worldWritable(mode) {
		c.find(clsPermWorld, p.operands[0].Span)
	}
	if p.has("-R", "--recursive") {
		c.systemRecursive(targets)
	}
}

func worldWritable(mode string) bool {
	if numericMode.MatchString(mode) {
		last := mode[len(mode)-1]
		return last == '2' || last == '3' || last == '6' || last == '7'
	}
	for _, clause := range strings.Split(mode, ",") {
		who, perm, ok := cutAny(clause, "+=")
		if !ok {
			continue
		}
		if (strings.ContainsAny(who, "oa")) && strings.Contains(perm, "w") {
			return true
		}
	}
	return false
}

func cutAny(s, seps string) (before, after string, ok bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// systemRecursive flags a recursive permission change of / or a system
// directory.
func (c *cmd) systemRecursive(targets []Arg) {
	for _, t := range targets {
		switch deleteTarget(t) {
		case clsDeleteRoot, clsDeleteSystem:
			c.find(clsPermSystem, t.Span)
		}
	}
}

func ruleChown(c *cmd) {
	p, _ := c.parse(opts{long: []string{"--reference", "--from"}}, false)
	if !p.has("-R", "--recursive") || len(p.operands) == 0 {
		return
	}
	c.systemRecursive(p.operands[1:])
	owner := p.operands[0].Value
	user, group, _ := strings.Cut(owner, ":")
	if c.name == "chown" && (user == "root" || user == "0" || (user == "" && (group == "root" || group == "0"))) {
		c.find(clsChownRoot, p.operands[0].Span)
	}
}

var killSignal = regexp.MustCompile(`^-(9|KILL|SIGKILL|s|n|[0-9]+|[A-Z]+[0-9]*|SIG[A-Z]+[0-9]*)$`)

func ruleKill(c *cmd) {
	i := 1
	force := false
	if i < len(c.args) {
		a := c.args[i].Value
		switch {
		case a == "-s" || a == "-n":
			if i+1 < len(c.args) {
				force = isKillSig(c.args[i+1].Value)
			}
			i += 2
		case a == "-l" || a == "-L":
			return
		case killSignal.MatchString(a):
			force = isKillSig(strings.TrimPrefix(a, "-"))
			i++
		}
	}
	if i < len(c.args) && c.args[i].Value == "--" {
		i++
	}
	for _, op := range c.args[i:] {
		if op.Value == "-1" {
			c.find(clsKillAll, c.span)
			return
		}
		if !op.Static && (strings.Contains(op.Value, "pgrep") || strings.Contains(op.Value, "pidof")) {
			if strings.Contains(op.Value, "warden") {
				c.find(clsKillWarden, op.Span)
			}
			if force {
				c.find(clsForceKill, c.span)
			}
		}
	}
}

func isKillSig(s string) bool {
	s = strings.ToUpper(strings.TrimPrefix(s, "SIG"))
	return s == "9" || s == "KILL"
}

func ruleKillByName(c *cmd) {
	p, _ := c.parse(opts{short: "sugtPUGF", long: []string{"--signal", "--user", "--group", "--parent", "--older-than", "--younger-than"}}, false)
	force := false
	if p.has("-9") {
		force = true
	}
	for _, a := range c.args[1:] {
		if a.Value == "-KILL" || a.Value == "-SIGKILL" || a.Value == "-9" {
			force = true
		}
	}
	for _, f := range []string{"-s", "--signal"} {
		if v, ok := p.get(f); ok && isKillSig(v) {
			force = true
		}
	}
	for _, op := range p.operands {
		if strings.Contains(strings.ToLower(op.Value), "warden") {
			c.find(clsKillWarden, op.Span)
		}
	}
	if force {
		c.find(clsForceKill, c.span)
	}
}

func ruleShutdown(c *cmd) {
	for _, a := range c.args[1:] {
		if a.Value == "-c" || a.Value == "--help" || a.Value == "--version" {
			return
		}
	}
	c.find(clsShutdown, c.span)
}

func ruleSystemctl(c *cmd) {
	p, _ := c.parse(opts{short: "HMtpsnoP", long: []string{"--host", "--machine", "--type", "--property", "--signal", "--state", "--lines", "--output", "--root", "--kill-whom"}}, false)
	if len(p.operands) == 0 {
		return
	}
	verb := p.operands[0].Value
	switch verb {
	case "poweroff", "reboot", "halt", "kexec", "soft-reboot":
		c.find(clsShutdown, c.span)
	case "isolate":
		for _, op := range p.operands[1:] {
			if strings.HasPrefix(op.Value, "poweroff") || strings.HasPrefix(op.Value, "reboot") || strings.HasPrefix(op.Value, "halt") {
				c.find(clsShutdown, c.span)
				return
			}
		}
		c.find(clsService, c.span)
	case "stop", "restart", "disable", "mask", "kill", "try-restart", "reload-or-restart", "force-reload":
		for _, op := range p.operands[1:] {
			if strings.Contains(op.Value, "warden") {
				c.find(clsKillWarden, op.Span)
			}
		}
		c.find(clsService, c.span)
	}
}

func ruleFirewall(c *cmd) {
	vals := strings.ToLower(strings.Join(c.Words()[1:], " "))
	switch c.name {
	case "nft":
		if strings.Contains(vals, "flush ruleset") {
			c.find(clsFirewallFlush, c.span)
		}
	case "ufw":
		if vals == "disable" || strings.HasPrefix(vals, "reset") || strings.HasPrefix(vals, "--force reset") {
			c.find(clsFirewallFlush, c.span)
		}
	default:
		for _, a := range c.args[1:] {
			if a.Value == "-F" || a.Value == "--flush" || (strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "F")) {
				c.find(clsFirewallFlush, c.span)
				return
			}
		}
	}
}

// Words returns the candidate's argv values.
func (c *cmd) Words() []string {
	out := make([]string, len(c.args))
	for i, a := range c.args {
		out[i] = a.Value
	}
	return out
}

// gitProgramKeys are config keys whose value git runs as a program.
var gitProgramKeys = regexp.MustCompile(`^(core\.(pager|sshcommand|editor|fsmonitor|hookspath|askpass)|diff\.external|sequence\.editor|gpg\.(program|[a-z0-9]+\.program)|credential\.helper|credential\..*\.helper|pager\..*|alias\..*|diff\..*\.(textconv|command)|filter\..*\.(clean|smudge|process)|merge\..*\.driver|uploadpack\.packobjectshook|core\.gitproxy|protocol\.ext\.allow)$`)

func ruleGit(c *cmd) {
	i := 1
	for i < len(c.args) {
		a := c.args[i].Value
		switch {
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path" && i+1 < len(c.args) && !strings.HasPrefix(c.args[i+1].Value, "-"):
			i += 2
			continue
		case a == "-c" || a == "--config-env":
			if i+1 < len(c.args) {
				c.gitConfig(c.args[i+1])
			}
			i += 2
			continue
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			c.gitConfig(Arg{Value: a[2:], Static: c.args[i].Static, Span: c.args[i].Span})
		case strings.HasPrefix(a, "-"):
		default:
			c.gitSub(a, i)
			return
		}
		i++
	}
}

func (c *cmd) gitConfig(a Arg) {
	key, val, _ := strings.Cut(a.Value, "=")
	if !gitProgramKeys.MatchString(strings.ToLower(key)) {
		return
	}
	if strings.HasPrefix(strings.ToLower(key), "alias.") && !strings.HasPrefix(val, "!") {
		return
	}
	prog := a
	prog.Value, prog.off = strings.TrimPrefix(val, "!"), 0
	c.programOption(prog, "git -c "+key)
}

func (c *cmd) gitSub(sub string, at int) {
	rest := c.args[at+1:]
	flags := map[string]bool{}
	var ops []Arg
	for _, a := range rest {
		v := a.Value
		switch {
		case strings.HasPrefix(v, "--"):
			k, _, _ := strings.Cut(v, "=")
			flags[k] = true
			if strings.HasPrefix(v, "--upload-pack") || strings.HasPrefix(v, "--receive-pack") || strings.HasPrefix(v, "--exec=") {
				_, prog, _ := strings.Cut(v, "=")
				c.programOption(Arg{Value: prog, Static: a.Static, Span: a.Span}, "git "+k)
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for _, ch := range v[1:] {
				flags["-"+string(ch)] = true
			}
		default:
			ops = append(ops, a)
			if strings.HasPrefix(v, "ext::") {
				c.programOption(Arg{Value: strings.TrimPrefix(v, "ext::"), Static: a.Static, Span: a.Span}, "git ext::")
			}
		}
	}
	has := func(fs ...string) bool {
		for _, f := range fs {
			if flags[f] {
				return true
			}
		}
		return false
	}
	switch sub {
	case "push":
		if has("-f", "--force", "--force-with-lease", "--force-if-includes") {
			c.find(clsGitForcePush, c.span)
		}
		for _, op := range ops {
			if strings.HasPrefix(op.Value, "+") {
				c.find(clsGitForcePush, op.Span)
			}
			if strings.HasPrefix(op.Value, ":") && len(op.Value) > 1 {
				c.find(clsGitRemoteDelete, op.Span)
			}
		}
		if has("-d", "--delete", "--mirror", "--prune") {
			c.find(clsGitRemoteDelete, c.span)
		}
	case "reset":
		for f := range flags {
			if len(f) >= 4 && strings.HasPrefix("--hard", f) {
				c.find(clsGitResetHard, c.span)
			}
		}
	case "branch":
		if has("-D") || (has("-d", "--delete") && has("-f", "--force")) {
			c.find(clsGitBranchDelete, c.span)
		}
	case "clean":
		if has("-f", "--force") && !has("-n", "--dry-run") {
			c.find(clsGitClean, c.span)
		}
	case "filter-branch", "filter-repo":
		c.find(clsGitRewrite, c.span)
	case "config":
		c.gitConfigSet(rest)
	}
}

func ruleDocker(c *cmd) {
	i := 1
	redirect := false
	for i < len(c.args) {
		a := c.args[i].Value
		if !strings.HasPrefix(a, "-") {
			break
		}
		k, _, hasVal := strings.Cut(a, "=")
		switch k {
		case "-H", "--host", "--context", "-c", "--url", "--connection", "--identity", "-r", "--remote":
			redirect = true
		}
		if !hasVal && slicesHas([]string{"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--url", "--connection", "--identity", "--tlscacert", "--tlscert", "--tlskey", "--root", "--runroot", "--storage-driver", "--cgroup-manager"}, k) {
			i++
		}
		i++
	}
	if redirect {
		c.find(clsContainerDaemon, c.span)
	}
	if i >= len(c.args) {
		return
	}
	sub := c.args[i].Value
	rest := c.args[i+1:]
	first := ""
	if len(rest) > 0 {
		first = rest[0].Value
	}
	switch sub {
	case "context":
		if first == "use" {
			c.find(clsContainerDaemon, c.span)
		}
	case "stop", "kill", "rm", "rmi", "restart":
		c.find(clsContainerLife, c.span)
	case "compose":
		c.composeVerb(rest)
	case "system", "container", "image", "volume", "network", "builder", "buildx", "pod":
		if slicesHas([]string{"prune", "rm", "remove", "kill", "stop", "restart"}, first) {
			c.find(clsContainerLife, c.span)
		}
	case "run", "create":
		c.privileged(rest)
	}
}

func (c *cmd) composeVerb(rest []Arg) {
	for i := 0; i < len(rest); i++ {
		v := rest[i].Value
		if strings.HasPrefix(v, "-") {
			if slicesHas([]string{"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory"}, v) {
				i++
			}
			continue
		}
		if slicesHas([]string{"down", "stop", "kill", "rm", "restart"}, v) {
			c.find(clsContainerLife, c.span)
		}
		return
	}
}

func ruleCompose(c *cmd) { c.composeVerb(c.args[1:]) }

func (c *cmd) privileged(rest []Arg) {
	for i, a := range rest {
		v := a.Value
		next := ""
		if i+1 < len(rest) {
			next = rest[i+1].Value
		}
		switch {
		case v == "--privileged" || v == "--privileged=true":
		case v == "--pid=host" || v == "--net=host" || v == "--network=host" || v == "--ipc=host" || v == "--userns=host" || v == "--uts=host":
		case (v == "--pid" || v == "--net" || v == "--network" || v == "--ipc" || v == "--userns") && next == "host":
		case strings.HasPrefix(v, "--cap-add") && (strings.Contains(strings.ToUpper(v+" "+next), "ALL") || strings.Contains(strings.ToUpper(v+" "+next), "SYS_ADMIN")):
		case strings.HasPrefix(v, "--security-opt") && strings.Contains(v+" "+next, "unconfined"):
		case (v == "-v" || v == "--volume") && hostMount(next):
		case strings.HasPrefix(v, "--volume=") && hostMount(v[len("--volume="):]):
		case strings.HasPrefix(v, "-v") && len(v) > 2 && hostMount(v[2:]):
		case strings.HasPrefix(v, "--mount") && (strings.Contains(v+","+next+",", "source=/,") || strings.Contains(v+","+next+",", "src=/,") || strings.Contains(v+next, "docker.sock")):
		default:
			continue
		}
		c.find(clsContainerPriv, a.Span)
	}
}

func hostMount(spec string) bool {
	src, _, _ := strings.Cut(spec, ":")
	src = cleanPath(src)
	return src == "/" || strings.HasSuffix(src, "docker.sock") || src == "/etc" || src == "/root" || src == "/var/run" || src == "/run" || src == "~"
}

func ruleInfra(c *cmd) {
	var ops []string
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		if !strings.HasPrefix(v, "-") {
			ops = append(ops, strings.ToLower(v))
			continue
		}
		if infraValueFlags[v] {
			i++ // the flag's value is not a verb
		}
	}
	if len(ops) == 0 {
		return
	}
	words := strings.Join(c.Words()[1:], " ")
	switch c.name {
	case "kubectl", "oc":
		if ops[0] == "delete" || ops[0] == "drain" {
			c.find(clsInfraDestroy, c.span)
		}
	case "helm":
		if ops[0] == "uninstall" || ops[0] == "delete" || ops[0] == "del" {
			c.find(clsInfraDestroy, c.span)
		}
	case "terraform", "tofu":
		if ops[0] == "destroy" || (ops[0] == "apply" && strings.Contains(words, "-destroy")) {
			c.find(clsInfraDestroy, c.span)
		}
	case "pulumi":
		if ops[0] == "destroy" {
			c.find(clsInfraDestroy, c.span)
		}
	case "aws":
		if len(ops) > 1 && (strings.HasPrefix(ops[1], "delete-") || strings.HasPrefix(ops[1], "terminate-") || ops[1] == "rb" || (ops[0] == "s3" && ops[1] == "rm")) {
			c.find(clsInfraDestroy, c.span)
		}
	default: // gcloud, az
		for _, o := range ops {
			if o == "delete" {
				c.find(clsInfraDestroy, c.span)
				return
			}
		}
	}
}

func rulePkg(c *cmd) {
	var ops []string
	for _, a := range c.args[1:] {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a.Value)
		}
	}
	first, second := "", ""
	if len(ops) > 0 {
		first = ops[0]
	}
	if len(ops) > 1 {
		second = ops[1]
	}
	remove := false
	switch c.name {
	case "apt", "apt-get", "aptitude":
		remove = slicesHas([]string{"remove", "purge", "autoremove", "autopurge"}, first)
	case "dpkg":
		for _, a := range c.args[1:] {
			if slicesHas([]string{"-r", "-P", "--remove", "--purge"}, a.Value) {
				remove = true
			}
		}
	case "yum", "dnf", "microdnf":
		remove = slicesHas([]string{"remove", "erase", "autoremove"}, first)
	case "pacman":
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.Value, "-R") || a.Value == "--remove" {
				remove = true
			}
		}
	case "apk":
		remove = first == "del"
	case "zypper":
		remove = first == "rm" || first == "remove"
	case "snap", "brew", "port":
		remove = slicesHas([]string{"remove", "uninstall", "rm"}, first)
	case "flatpak", "gem", "cargo", "pipx":
		remove = first == "uninstall"
	case "npm":
		remove = slicesHas([]string{"uninstall", "remove", "rm", "un", "r", "unlink"}, first)
	case "pnpm":
		remove = slicesHas([]string{"remove", "rm", "uninstall", "un"}, first)
	case "yarn", "poetry":
		remove = first == "remove"
	case "pip", "pip3":
		remove = first == "uninstall"
	case "uv":
		remove = first == "remove" || (first == "pip" && second == "uninstall")
	case "conda", "mamba", "micromamba":
		remove = first == "remove" || first == "uninstall"
	case "nix-env":
		for _, a := range c.args[1:] {
			if a.Value == "-e" || a.Value == "--uninstall" {
				remove = true
			}
		}
	}
	if remove {
		c.find(clsPkgRemove, c.span)
	}
}

func ruleNet(c *cmd) {
	for _, a := range c.args[1:] {
		if hasMetadataHost(a.Value) {
			c.find(clsMetadata, a.Span)
			return
		}
	}
}

func ruleNetcat(c *cmd) {
	ruleNet(c)
	for _, a := range c.args[1:] {
		v := strings.ToLower(a.Value)
		if c.name == "socat" {
			if strings.Contains(v, "exec:") || strings.Contains(v, "system:") {
				c.find(clsReverseShell, a.Span)
				return
			}
			continue
		}
		if v == "-e" || v == "-c" || v == "--exec" || v == "--sh-exec" || v == "--lua-exec" || strings.HasPrefix(v, "--exec=") || strings.HasPrefix(v, "--sh-exec=") ||
			(strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v[1:], "ec") && len(v) <= 5) {
			c.find(clsReverseShell, c.span)
			return
		}
	}
}

var (
	sqlDrop     = regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|index|view|user|role|function|procedure|trigger|sequence|type|extension|owned)\b`)
	sqlTruncate = regexp.MustCompile(`(?i)\btruncate\b`)
	sqlDelete   = regexp.MustCompile(`(?i)\bdelete\s+from\s+[^;]*`)
	sqlWhere    = regexp.MustCompile(`(?i)\bwhere\b`)
)

// sql checks SQL text for destructive statements.
func (c *cmd) sql(text string, sp Span) {
	if sqlDrop.MatchString(text) {
		c.find(clsSQLDrop, sp)
	}
	if sqlTruncate.MatchString(text) {
		c.find(clsSQLTruncate, sp)
	}
	for _, m := range sqlDelete.FindAllString(text, -1) {
		if !sqlWhere.MatchString(m) {
			c.find(clsSQLDeleteAll, sp)
		}
	}
}

func ruleSQL(c *cmd) {
	if c.in.kind == stdinText {
		c.sql(c.in.text, c.in.span)
	}
	switch c.name {
	case "psql":
		c.sqlFlags("-c", "--command")
	case "mysql", "mariadb", "cockroach":
		c.sqlFlags("-e", "--execute")
	case "clickhouse-client":
		c.sqlFlags("-q", "--query")
	case "duckdb":
		c.sqlFlags("-c", "-cmd")
	case "sqlite3":
		seenDB := false
		for i := 1; i < len(c.args); i++ {
			v := c.args[i].Value
			switch {
			case v == "-cmd" && i+1 < len(c.args):
				i++
				c.sql(c.args[i].Value, c.args[i].Span)
			case strings.HasPrefix(v, "-"):
				if slicesHas([]string{"-separator", "-newline", "-nullvalue", "-init", "-vfs", "-maxsize", "-mmap", "-pagecache", "-lookaside", "-heap"}, v) {
					i++
				}
			case !seenDB:
				seenDB = true
			default:
				c.sql(v, c.args[i].Span)
			}
		}
	}
}

func (c *cmd) sqlFlags(short, long string) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case (v == short || v == long) && i+1 < len(c.args):
			c.sql(c.args[i+1].Value, c.args[i+1].Span)
		case strings.HasPrefix(v, long+"="):
			c.sql(v[len(long)+1:], c.args[i].Span)
		case len(short) == 2 && strings.HasPrefix(v, short) && len(v) > 2 && !strings.HasPrefix(v, "--"):
			c.sql(v[2:], c.args[i].Span)
		}
	}
}

// wardenAdmin are warden verbs that change policy or answer approvals.
var wardenAdmin = map[string]bool{"approvals": true, "approve": true, "deny": true, "grants": true, "grant": true, "config": true, "serve": true, "exec": true, "yolo": true, "sessions": true, "worker": true, "policy": true}

func ruleWarden(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		if v == "--state" || v == "--config" {
			i++
			continue
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		if wardenAdmin[v] && !(v == "config" && i+1 < len(c.args) && c.args[i+1].Value == "check") {
			c.find(clsWardenAdmin, c.span)
		}
		return
	}
}

func ruleRg(c *cmd) {
	c.optionProgram(opts{long: []string{"--pre", "--hostname-bin"}}, "--pre", "--hostname-bin")
}

// optionProgram flags program-bearing options and analyses their value
// as a command.
func (c *cmd) optionProgram(o opts, names ...string) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		for _, n := range names {
			switch {
			case a.Value == n && i+1 < len(c.args):
				c.programOption(c.args[i+1], c.name+" "+n)
			case strings.HasPrefix(a.Value, n+"="):
				v := a
				v.Value, v.off = a.Value[len(n)+1:], 0
				c.programOption(v, c.name+" "+n)
			case len(n) == 2 && strings.HasPrefix(a.Value, n) && len(a.Value) > 2 && !strings.HasPrefix(a.Value, "--"):
				v := a
				v.Value, v.off = a.Value[2:], 0
				c.programOption(v, c.name+" "+n)
			}
		}
	}
	_ = o
}

// programOption records an option that runs a program and analyses it.
func (c *cmd) programOption(a Arg, how string) {
	if !knownHelper(a) {
		c.find(clsProgramOption, a.Span)
	}
	if strings.TrimSpace(a.Value) == "" {
		return
	}
	c.code(a, how)
}

func ruleTar(c *cmd) {
	c.optionProgram(opts{}, "--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command")
	for _, a := range c.args[1:] {
		if strings.HasPrefix(a.Value, "--checkpoint-action=exec=") {
			v := a
			v.Value, v.off = strings.TrimPrefix(a.Value, "--checkpoint-action=exec="), 0
			c.programOption(v, "tar --checkpoint-action")
		}
	}
}

func ruleRsync(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		var val Arg
		switch {
		case strings.HasPrefix(a.Value, "--rsh="):
			val = a
			val.Value, val.off = a.Value[len("--rsh="):], 0
		case (a.Value == "--rsh" || (strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.HasSuffix(a.Value, "e"))) && i+1 < len(c.args):
			val = c.args[i+1]
		default:
			continue
		}
		if f := strings.Fields(val.Value); len(f) > 0 && (f[0] == "ssh" || strings.HasSuffix(f[0], "/ssh")) && !strings.Contains(val.Value, "ProxyCommand") {
			continue
		}
		c.programOption(val, "rsync -e")
	}
}

// assignFindings judges NAME=VALUE set for a command or exported.
func (w *walker) assignFindings(idx int, name, val string, sp Span, via []string) {
	switch name {
	case "PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB":
		// Project-relative module paths (PYTHONPATH=src pytest) are how
		// tests are run; absolute or dynamic ones can plant code.
		if !relativePaths(val) {
			w.find(idx, clsEnvLoader, sp)
		}
	case "NODE_OPTIONS":
		if nodeLoads.MatchString(val) {
			w.find(idx, clsEnvLoader, sp)
		}
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
		"PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH":
		w.find(idx, clsEnvLoader, sp)
	case "DOCKER_HOST", "CONTAINER_HOST", "DOCKER_CONTEXT":
		w.find(idx, clsContainerDaemon, sp)
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "GIT_PROXY_COMMAND":
		w.find(idx, clsProgramOption, sp)
		prog := strings.TrimLeft(val, "|")
		w.payload(strings.ReplaceAll(prog, "%s", "f"), appendVia(via, name+"="), sp, -1, stdin{})
	case "PAGER", "GIT_PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "SYSTEMD_PAGER":
		if strings.ContainsAny(val, " ;|&$`<>()") {
			w.find(idx, clsProgramOption, sp)
			w.payload(val, appendVia(via, name+"="), sp, -1, stdin{})
		}
	}
}

// redirectFindings judges a command's redirections.
func (w *walker) redirectFindings(idx int, redirs []Redirect) {
	for _, r := range redirs {
		t := r.Target.Value
		if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
			w.find(idx, clsReverseShell, r.Target.Span)
			if hasMetadataHost(t) {
				w.find(idx, clsMetadata, r.Target.Span)
			}
			continue
		}
		if procMem.MatchString(cleanPath(t)) {
			w.find(idx, clsProcMem, r.Target.Span)
			continue
		}
		switch r.Op {
		case ">", ">>", ">|", "&>", "&>>", "<>":
		case ">&":
			if strings.Trim(t, "0123456789-") == "" {
				continue
			}
		default:
			continue
		}
		if cls := w.sensitiveWrite(t); cls != "" {
			w.find(idx, cls, r.Target.Span)
		}
	}
}

// fetchers download content from the network.
var fetchers = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true, "xh": true, "httpie": true,
	"lynx": true, "links": true, "w3m": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "tftp": true,
	"iwr": true, "irm": true, "invoke-webrequest": true, "invoke-restmethod": true, "wget2": true, "curlie": true}

// isDecoder reports a command that decodes or unscrambles its input.
func isDecoder(c *Command) bool {
	words := c.Words()
	has := func(fs ...string) bool {
		for _, w := range words[1:] {
			for _, f := range fs {
				if w == f || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && len(f) == 2 && strings.Contains(w[1:], f[1:])) {
					return true
				}
			}
		}
		return false
	}
	switch c.key() {
	case "base64", "base32", "basenc":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert")
	case "openssl":
		return has("-d", "-base64", "-a")
	case "uudecode", "tr", "rev", "gpg", "zcat", "gunzip", "gzip", "bzcat", "xzcat", "unxz", "zstdcat":
		return c.key() != "gzip" || has("-d")
	}
	return false
}

// forkBomb is forkBomb(fd), remembered per declaration: a script calling
// log() a thousand times would otherwise walk its body a thousand times.
// The tree is never rewritten (words are brace-split on copies), so an
// answer holds for the whole analysis.
func (w *walker) forkBomb(fd *syntax.FuncDecl) bool {
	if bomb, ok := w.bombs[fd]; ok {
		return bomb
	}
	if w.bombs == nil {
		w.bombs = map[*syntax.FuncDecl]bool{}
	}
	bomb := forkBomb(fd)
	w.bombs[fd] = bomb
	return bomb
}

// forkBomb reports a function that calls itself at least twice per call,
// or once in the background: exponential process growth.
func forkBomb(fd *syntax.FuncDecl) bool {
	name := fd.Name.Value
	calls, bg := 0, false
	walkTree(fd.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background {
				if ce, ok := n.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
					bg = true
				}
				if b, ok := n.Cmd.(*syntax.BinaryCmd); ok && strings.Contains(stmtText(b), name) {
					bg = true
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 && n.Args[0].Lit() == name {
				calls++
			}
		}
		return true
	})
	return calls >= 2 || (calls >= 1 && bg)
}

func stmtText(n syntax.Node) string {
	var b strings.Builder
	walkTree(n, func(n syntax.Node) bool {
		if l, ok := n.(*syntax.Lit); ok {
			b.WriteString(l.Value + " ")
		}
		return true
	})
	return b.String()
}

// structural finds patterns across commands: chmod +x f then ./f.
func (w *walker) structural() {
	made := map[string]int{}
	for i := range w.a.Commands {
		c := &w.a.Commands[i]
		if c.Name() == "chmod" && len(c.Argv) > 2 {
			mode := c.Argv[1].Value
			if strings.Contains(mode, "+x") || (numericMode.MatchString(mode) && strings.ContainsAny(mode[len(mode)-3:len(mode)-2], "1357")) {
				for _, t := range c.Argv[2:] {
					made[path.Clean(t.Value)] = i
				}
			}
			continue
		}
		if len(c.Argv) == 0 || !c.Argv[0].Static || !strings.Contains(c.Argv[0].Value, "/") {
			continue
		}
		if j, ok := made[path.Clean(c.Argv[0].Value)]; ok {
			w.find(-1, clsChmodRun, w.a.Commands[j].Span.join(c.Span))
		}
	}
}

// ruleMan: -P/--pager name a program; -H/--html open a browser ($BROWSER
// or the attached name).
func ruleMan(c *cmd) {
	c.optionProgram(opts{}, "-P", "--pager")
	for _, a := range c.args[1:] {
		if strings.HasPrefix(a.Value, "-H") || strings.HasPrefix(a.Value, "--html") {
			c.find(clsProgramOption, a.Span)
			return
		}
	}
}

// argProcMem flags any argument naming another process's memory.
func (c *cmd) argProcMem() {
	for _, a := range c.args[1:] {
		v := a.Value
		if !strings.Contains(v, "/proc/") {
			continue
		}
		if _, after, ok := strings.Cut(v, "="); ok && strings.HasPrefix(after, "/proc/") {
			v = after
		}
		if procMem.MatchString(cleanPath(v)) {
			c.find(clsProcMem, a.Span)
		}
	}
}

// infraValueFlags are global flags of kubectl, helm, terraform and the
// cloud CLIs that take a separate value.
var infraValueFlags = map[string]bool{
	"-n": true, "--namespace": true, "--context": true, "--cluster": true, "--user": true, "--kubeconfig": true,
	"-s": true, "--server": true, "--kube-context": true, "-l": true, "--selector": true, "-o": true, "--output": true,
	"-f": true, "--filename": true, "-c": true, "--container": true, "--profile": true, "--region": true,
	"--project": true, "--subscription": true, "-g": true, "--resource-group": true, "-chdir": true, "--stack": true,
}

// helpers are programs that program-bearing options usually name: pagers
// and compressors. A bare one (no arguments but flags, nothing dynamic)
// is what the option is for, not a way to run something else.
var helpers = map[string]bool{
	"cat": true, "less": true, "more": true, "most": true, "bat": true, "delta": true, "diff-so-fancy": true, "head": true, "tail": true,
	"gzip": true, "gunzip": true, "pigz": true, "xz": true, "unxz": true, "zstd": true, "unzstd": true, "bzip2": true, "pbzip2": true,
	"lz4": true, "lzma": true, "lzip": true, "brotli": true, "ssh": true, "vim": true, "vi": true, "nvim": true, "nano": true, "emacs": true,
}

func knownHelper(a Arg) bool {
	if !a.Static {
		return false
	}
	f := strings.Fields(a.Value)
	if len(f) == 0 || !helpers[path.Base(f[0])] {
		return false
	}
	for _, w := range f[1:] {
		if !strings.HasPrefix(w, "-") || strings.ContainsAny(w, "$`;|&<>()'\"") {
			return false
		}
	}
	return true
}

func ruleTrap(c *cmd) {
	if len(c.args) > 2 && !strings.HasPrefix(c.args[1].Value, "-") {
		c.code(c.args[1], "trap")
	}
}

// ruleGitConfig catches a program-bearing key set persistently with
// `git config KEY VALUE`.
func (c *cmd) gitConfigSet(rest []Arg) {
	var ops []Arg
	for _, a := range rest {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) >= 2 {
		v := ops[1]
		v.Value = ops[0].Value + "=" + ops[1].Value
		c.gitConfig(v)
	}
}

// nodeLoads matches NODE_OPTIONS that load code or open a debugger.
var nodeLoads = regexp.MustCompile(`(^|\s)(-r|--require|--import|--loader|--experimental-loader|--inspect[a-z-]*)(\s|=|$)`)

// relativePaths reports a colon-separated list of project-relative
// paths: no absolute, home, parent or dynamic entries.
func relativePaths(v string) bool {
	if v == "" {
		return false
	}
	for _, p := range strings.Split(v, ":") {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.ContainsAny(p, "$`") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
			return false
		}
	}
	return true
}
