package shell

import "strings"

// Family packages: package removal, with each manager's global options
// read before the verb (apt-get -o X=1 purge, npm --workspace a
// uninstall); and the managers' run/exec verbs, whose command is judged
// like any other (npx, uv run, poetry run, bundle exec).

var _ = family(func() {
	register("packages", ruleApt, "apt", "apt-get", "aptitude")
	register("packages", rulePkg, "dpkg", "yum", "dnf", "microdnf", "pacman", "yay", "paru", "apk", "zypper", "snap", "brew", "port",
		"pip", "pipx", "gem", "cargo", "conda", "mamba", "micromamba", "nix-env", "nix", "choco", "winget", "scoop", "rpm", "emerge", "pkg", "xbps-remove", "opkg")
	register("packages", ruleNode, "npm", "pnpm", "yarn", "npx", "pnpx", "bunx")
	register("packages", ruleRunner, "uv", "uvx", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "bundle", "mise", "asdf", "direnv", "nix-shell", "devbox", "conda-run", "dotenv", "opam", "stack", "cabal")
})

var aptSpec = spec("", "o|option=", "c|config-file=", "t|target-release|default-release=", "q|quiet?", "y|yes|assume-yes",
	"s|simulate|just-print|dry-run|recon|no-act", "d|download-only", "f|fix-broken", "m|ignore-missing|fix-missing", "u|show-upgraded",
	"V|verbose-versions", "a|host-architecture=", "P|build-profiles=", "b|compile|build", "no-install-recommends", "install-recommends",
	"install-suggests", "no-install-suggests", "reinstall", "purge", "allow-downgrades", "allow-remove-essential",
	"allow-change-held-packages", "auto-remove|autoremove", "no-upgrade", "only-upgrade", "force-yes", "print-uris", "list-cleanup",
	"trivial-only", "no-remove", "h|help", "v|version", "assume-no", "no-download", "mark-auto", "ignore-hold", "with-new-pkgs",
	"no-show-upgraded", "F|full-text", "installed", "upgradable", "all-versions", "no-allow-insecure-repositories",
	"allow-unauthenticated", "allow-insecure-repositories", "allow-releaseinfo-change", "solver=", "arch-only", "indep-only")

// ruleApt: remove, purge, autoremove, a trailing "-" on install, and
// --purge/--auto-remove; -s simulates.
func ruleApt(c *cmd) {
	p := c.parse(aptSpec)
	if p.has("s") || len(p.operands) == 0 {
		return
	}
	verb := p.operands[0].Value
	switch verb {
	case "remove", "purge", "autoremove", "autopurge", "uninstall":
		c.find(clsPkgRemove, c.span)
	case "install", "upgrade", "dist-upgrade", "full-upgrade":
		for _, op := range p.operands[1:] {
			if strings.HasSuffix(op.Value, "-") || strings.HasSuffix(op.Value, "_") {
				c.find(clsPkgRemove, op.Span)
			}
		}
		if p.has("auto-remove") {
			c.find(clsPkgRemove, c.span)
		}
	}
	for _, o := range p.values("o") {
		k, v, _ := strings.Cut(o.Value, "=")
		if strings.Contains(strings.ToLower(k), "::pre-invoke") || strings.Contains(strings.ToLower(k), "::post-invoke") ||
			strings.Contains(strings.ToLower(k), "pre-install-pkgs") || strings.EqualFold(k, "APT::Update::Pre-Invoke") {
			c.programOption(Arg{Value: v, Static: o.Static, Span: o.Span}, "apt-get -o "+k)
		}
	}
}

// rulePkg: the other managers' removal verbs and flags.
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
	flag := func(fs ...string) bool { return hasWord(c.args, fs...) }
	remove := false
	switch c.name {
	case "dpkg":
		remove = flag("-r", "-P", "--remove", "--purge") || hasPrefixWord(c.args, "--force-remove", "--force-all")
	case "rpm":
		remove = flag("-e", "--erase") || hasPrefixWord(c.args, "-e")
	case "yum", "dnf", "microdnf":
		remove = slicesHas([]string{"remove", "erase", "autoremove", "rm"}, first)
	case "pacman", "yay", "paru":
		for _, a := range c.args[1:] {
			if strings.HasPrefix(a.Value, "-R") || a.Value == "--remove" {
				remove = true
			}
		}
	case "apk":
		remove = first == "del"
	case "zypper":
		remove = first == "rm" || first == "remove"
	case "snap", "brew", "port", "choco", "winget", "scoop":
		remove = slicesHas([]string{"remove", "uninstall", "rm", "zap"}, first)
	case "gem", "cargo", "pipx":
		remove = first == "uninstall" || first == "uninstall-all"
	case "pip":
		remove = first == "uninstall"
	case "conda", "mamba", "micromamba":
		remove = first == "remove" || first == "uninstall" || first == "env" && (second == "remove" || second == "rm")
		if first == "run" {
			c.runAfter(c.args, "conda run", "-n", "--name", "-p", "--prefix", "--cwd")
		}
	case "nix-env":
		remove = flag("-e", "--uninstall")
	case "nix":
		remove = first == "profile" && (second == "remove" || second == "rollback") || first == "store" && (second == "delete" || second == "gc") || first == "collect-garbage"
		if first == "shell" || first == "develop" || first == "run" {
			for i, a := range c.args {
				if (a.Value == "-c" || a.Value == "--command") && i+1 < len(c.args) {
					c.run(c.args[i+1:], "nix "+first+" -c")
					return
				}
			}
		}
	case "emerge":
		remove = flag("-C", "--unmerge", "--depclean", "-c")
	case "pkg":
		remove = first == "delete" || first == "remove" || first == "autoremove"
	case "xbps-remove":
		remove = true
	case "opkg":
		remove = first == "remove"
	}
	if remove {
		c.find(clsPkgRemove, c.span)
	}
}

var npmSpec = spec("", "w|workspace=", "prefix=", "C|dir=", "g|global", "ws|workspaces", "include-workspace-root", "y|yes", "no",
	"registry=", "userconfig=", "globalconfig=", "loglevel=", "location=", "cache=", "F|filter=", "c|call=", "p|package=",
	"cwd=", "s|silent", "q|quiet", "d", "dd", "ddd", "verbose", "json", "force", "f", "D|save-dev", "save", "S", "E|save-exact",
	"P|save-prod", "O|save-optional", "no-save", "dry-run", "ignore-scripts", "legacy-peer-deps", "production", "frozen-lockfile",
	"offline", "prefer-offline", "r|recursive", "h|help", "v|version")

// ruleNode: npm/pnpm/yarn removal verbs after their global options; npx,
// npm exec and friends run a package's program (or -c code).
func ruleNode(c *cmd) {
	p := c.parse(npmSpec)
	for _, v := range p.values("c") {
		c.code(v, c.name+" -c")
	}
	ops := p.operands
	switch c.name {
	case "npx", "pnpx", "bunx":
		if len(ops) > 0 {
			c.run(ops, c.name)
		}
		return
	}
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Value
	switch {
	case verb == "exec" || verb == "x" || verb == "dlx" || c.name == "yarn" && verb == "dlx":
		if len(ops) > 1 {
			c.run(ops[1:], c.name+" "+verb)
		}
	case c.name == "npm" && slicesHas([]string{"uninstall", "remove", "rm", "un", "r", "unlink"}, verb),
		c.name == "pnpm" && slicesHas([]string{"remove", "rm", "uninstall", "un"}, verb),
		c.name == "yarn" && (verb == "remove" || verb == "global" && len(ops) > 1 && ops[1].Value == "remove"),
		c.name == "bun" && (verb == "remove" || verb == "rm"):
		c.find(clsPkgRemove, c.span)
	case c.name == "npm" && verb == "cache" && len(ops) > 1 && ops[1].Value == "clean":
	case c.name == "npm" && verb == "token" && len(ops) > 1 && ops[1].Value == "list":
		c.findDetail(clsSecretRead, c.span, "npm token list")
	case c.name == "bun" && (verb == "x"):
		if len(ops) > 1 {
			c.run(ops[1:], "bun x")
		}
	}
}

// ruleRunner: project runners whose operands are a command (uv run CMD,
// poetry run CMD, bundle exec CMD, mise exec -- CMD, direnv exec DIR
// CMD, nix-shell --run CODE), and their removal verbs.
func ruleRunner(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	sub := c.args[1].Value
	switch c.name {
	case "uvx":
		c.runFrom(1, "uvx", "from", "with", "python", "p", "index-url", "extra-index-url")
		return
	case "nix-shell":
		for i, a := range c.args {
			if (a.Value == "--run" || a.Value == "--command") && i+1 < len(c.args) {
				c.code(c.args[i+1], "nix-shell --run")
			}
		}
		return
	case "direnv":
		if sub == "exec" && len(c.args) > 3 {
			c.run(c.args[3:], "direnv exec")
		}
		return
	case "dotenv":
		for i, a := range c.args {
			if a.Value == "--" && i+1 < len(c.args) {
				c.run(c.args[i+1:], "dotenv")
				return
			}
		}
		return
	}
	switch sub {
	case "run", "exec", "x":
		if c.name == "uv" || c.name == "poetry" || c.name == "pipenv" || c.name == "pdm" || c.name == "hatch" || c.name == "rye" || c.name == "pixi" ||
			c.name == "bundle" && sub == "exec" || c.name == "mise" || c.name == "asdf" || c.name == "devbox" || c.name == "opam" || c.name == "stack" || c.name == "cabal" {
			c.runFrom(2, c.name+" "+sub, "with", "python", "p", "from", "directory", "project", "package", "env", "e", "environment", "extra", "group", "index", "index-url", "extra-index-url", "switch")
		}
	case "remove", "uninstall":
		c.find(clsPkgRemove, c.span)
	case "pip":
		if len(c.args) > 2 && c.args[2].Value == "uninstall" {
			c.find(clsPkgRemove, c.span)
		}
	}
}

// runFrom runs the command that follows argv[from]'s options: words that
// start with a dash are options (those named take the next word too),
// "--" ends them.
func (c *cmd) runFrom(from int, how string, valued ...string) {
	i := from
	for i < len(c.args) {
		v := c.args[i].Value
		if v == "--" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") || !c.args[i].Static {
			break
		}
		name := strings.TrimLeft(v, "-")
		if !strings.Contains(name, "=") && slicesHas(valued, name) {
			i++
		}
		i++
	}
	if i < len(c.args) {
		c.run(c.args[i:], how)
	}
}

// runAfter runs what follows the options of a "run" verb (conda run -n
// ENV CMD).
func (c *cmd) runAfter(args []Arg, how string, valued ...string) {
	for i := 1; i < len(args); i++ {
		if args[i].Value == "run" {
			c.runFrom(i+1, how, func() []string {
				out := make([]string, len(valued))
				for j, v := range valued {
					out[j] = strings.TrimLeft(v, "-")
				}
				return out
			}()...)
			return
		}
	}
}
