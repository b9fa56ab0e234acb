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
		if c.name != "pipx" {
			c.registryPublish(first)
		}
	case "pip":
		remove = first == "uninstall"
	case "conda", "mamba", "micromamba":
		remove = first == "remove" || first == "uninstall" || first == "env" && (second == "remove" || second == "rm")
		if first == "run" {
			g := parseOpts(condaGlobal, c.args, 1)
			c.launch(condaRun, g.end+1)
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

var condaGlobal = spec("+", "v|verbose", "q|quiet", "json", "no-plugins", "h|help", "V|version")

var npmSpec = spec("", "w|workspace=", "prefix=", "C|dir=", "g|global", "ws|workspaces", "include-workspace-root", "y|yes", "no",
	"registry=", "userconfig=", "globalconfig=", "loglevel=", "location=", "cache=", "F|filter=", "c|call=", "p|package=",
	"cwd=", "s|silent", "q|quiet", "d", "dd", "ddd", "verbose", "json", "force", "f", "D|save-dev", "save", "S", "E|save-exact",
	"P|save-prod", "O|save-optional", "no-save", "dry-run?", "ignore-scripts", "access=", "tag=", "otp=", "provenance", "legacy-peer-deps", "production", "frozen-lockfile",
	"offline", "prefer-offline", "r|recursive", "h|help", "v|version")

// npmRun reads npm's options up to the first operand: the verb, or for
// npx the package whose program runs with the rest of the words as they
// are (its own options are not npm's).
var npmRun = npmSpec.with("+", "package=")

// ruleNode: npm/pnpm/yarn removal and publishing verbs after their global
// options; npx, npm exec and friends run a package's program (or -c
// code).
func ruleNode(c *cmd) {
	switch c.name {
	case "npx", "pnpx", "bunx":
		p := c.parse(npmRun)
		for _, v := range p.values("c") {
			c.code(v, c.name+" -c")
		}
		if len(p.operands) > 0 {
			c.run(p.operands, c.name)
		}
		return
	}
	head := parseOpts(npmRun, c.args, 1)
	if len(head.operands) > 0 {
		switch verb := head.operands[0].Value; {
		case verb == "exec" || verb == "x" || verb == "dlx" || c.name == "pnpm" && verb == "exec",
			c.name == "bun" && verb == "x":
			p := parseOpts(npmRun, c.args, head.end+1)
			c.explain(&p)
			for _, v := range append(head.values("c"), p.values("c")...) {
				c.code(v, c.name+" "+verb+" -c")
			}
			if len(p.operands) > 0 {
				c.run(p.operands, c.name+" "+verb)
			}
			return
		}
	}
	p := c.parse(npmSpec)
	for _, v := range p.values("c") {
		c.code(v, c.name+" -c")
	}
	ops := p.operands
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Value
	switch {
	case c.name == "npm" && slicesHas([]string{"uninstall", "remove", "rm", "un", "r", "unlink"}, verb),
		c.name == "pnpm" && slicesHas([]string{"remove", "rm", "uninstall", "un"}, verb),
		c.name == "yarn" && (verb == "remove" || verb == "global" && len(ops) > 1 && ops[1].Value == "remove"),
		c.name == "bun" && (verb == "remove" || verb == "rm"):
		c.find(clsPkgRemove, c.span)
	case c.name == "npm" && verb == "cache" && len(ops) > 1 && ops[1].Value == "clean":
	case c.name == "npm" && verb == "token" && len(ops) > 1 && ops[1].Value == "list":
		c.findDetail(clsSecretRead, c.span, "npm token list")
	}
	c.publish(&p, ops)
}

// runner is a project tool whose verbs run a command (uv run CMD, poetry
// run CMD, bundle exec CMD, mise exec -- CMD, conda run -n ENV CMD):
// options before the verb, then the verb's own launcher description.
type runner struct {
	global *optSpec
	// chdir are global options naming the project directory (uv
	// --directory DIR): relative paths of the command resolve there.
	chdir []string
	verbs map[string]*launcher
	// remove and publish are verbs that remove or publish packages;
	// dryRun are the options that make publish a rehearsal.
	remove, publish []string
	dryRun          []string
}

// runVerb is a verb whose operands are the command, options first.
func runVerb(opts ...string) *launcher { return &launcher{spec: spec("+", opts...)} }

var uvRun = runVerb("with=", "with-editable=", "with-requirements=", "p|python=", "extra=", "all-extras", "no-extra=", "no-dev", "dev",
	"group=", "only-group=", "no-group=", "all-groups", "only-dev", "isolated", "frozen", "locked", "no-sync", "package=", "all-packages",
	"no-project", "m|module", "s|script", "env-file=", "no-env-file", "index=", "default-index=", "i|index-url=", "extra-index-url=",
	"f|find-links=", "no-index", "directory=", "project=", "gui-script", "active", "exact", "inexact", "refresh", "reinstall", "upgrade",
	"U", "offline", "q|quiet", "v|verbose", "color=", "native-tls", "n|no-cache", "cache-dir=", "python-preference=", "no-build",
	"compile-bytecode", "link-mode=", "prerelease=", "resolution=", "from=", "no-config", "config-file=", "h|help")

var runners = map[string]*runner{
	"uv": {
		global: spec("+", "q|quiet", "v|verbose", "color=", "native-tls", "offline", "no-progress", "directory=", "project=", "config-file=",
			"no-config", "n|no-cache", "cache-dir=", "python-preference=", "managed-python", "no-managed-python", "allow-insecure-host=",
			"no-python-downloads", "h|help", "V|version"),
		chdir: []string{"directory"}, verbs: map[string]*launcher{"run": uvRun}, remove: []string{"remove"}, publish: []string{"publish"},
		dryRun: []string{"dry-run"},
	},
	"uvx": {verbs: map[string]*launcher{"": uvRun}},
	"poetry": {
		global: spec("+", "q|quiet", "v|verbose", "vv", "vvv", "n|no-interaction", "ansi", "no-ansi", "no-plugins", "no-cache",
			"C|directory=", "P|project=", "h|help", "V|version"),
		chdir: []string{"C"}, verbs: map[string]*launcher{"run": runVerb()}, remove: []string{"remove"}, publish: []string{"publish"},
		dryRun: []string{"dry-run"},
	},
	"pipenv": {
		global: spec("+", "where", "venv", "py", "envs", "rm", "bare", "man", "support", "site-packages", "python=", "clear", "q|quiet",
			"v|verbose", "pypi-mirror=", "version", "h|help"),
		verbs: map[string]*launcher{"run": runVerb()}, remove: []string{"uninstall"},
	},
	"pdm": {
		global: spec("+", "v|verbose", "q|quiet", "c|config=", "I|ignore-python", "p|project=", "g|global", "no-cache", "pep582?", "h|help", "V|version"),
		chdir:  []string{"p"}, verbs: map[string]*launcher{"run": runVerb("l|list", "j|json", "s|site-packages", "recreate", "skip=", "e|env=")},
		remove: []string{"remove"}, publish: []string{"publish"},
	},
	"hatch": {
		global: spec("+", "e|env=", "p|project=", "v|verbose", "q|quiet", "color", "no-color", "interactive", "no-interactive",
			"data-dir=", "cache-dir=", "config=", "h|help", "version"),
		verbs: map[string]*launcher{"run": runVerb()}, publish: []string{"publish"},
	},
	"rye": {
		global: spec("+", "v|verbose", "q|quiet", "h|help", "version"),
		verbs:  map[string]*launcher{"run": runVerb("l|list", "pyproject=", "env-file=")}, remove: []string{"remove"}, publish: []string{"publish"},
	},
	"pixi": {
		global: spec("+", "v|verbose", "q|quiet", "color=", "no-progress", "h|help", "V|version"),
		verbs: map[string]*launcher{"run": runVerb("manifest-path=", "frozen", "locked", "e|environment=", "clean-env", "force-activate",
			"skip-deps", "n|dry-run", "no-install", "revalidate")},
		remove: []string{"remove", "rm"},
	},
	"bundle": {
		global: spec("+", "no-color", "r|retry=", "V|verbose", "h|help", "v|version"),
		verbs:  map[string]*launcher{"exec": runVerb("keep-file-descriptors", "gemfile=")}, remove: []string{"remove"},
	},
	"mise": {
		global: spec("+", "C|cd=", "E|env=", "j|jobs=", "q|quiet", "v|verbose", "y|yes", "raw", "silent", "h|help", "V|version"),
		chdir:  []string{"C"},
		verbs: map[string]*launcher{
			"exec": {spec: spec("+", "c|command=", "C|cd=", "E|env=", "j|jobs=", "raw", "q|quiet"), after: true, code: []string{"c"}, chdir: []string{"C"}},
			"x":    {spec: spec("+", "c|command=", "C|cd=", "E|env=", "j|jobs=", "raw", "q|quiet"), after: true, code: []string{"c"}, chdir: []string{"C"}},
		},
		remove: []string{"uninstall"},
	},
	"asdf":   {verbs: map[string]*launcher{"exec": runVerb()}, remove: []string{"uninstall"}},
	"devbox": {global: spec("+", "q|quiet", "h|help"), verbs: map[string]*launcher{"run": runVerb("c|config=", "e|env=", "env-file=", "pure", "environment=", "list")}, remove: []string{"rm"}},
	"direnv": {verbs: map[string]*launcher{"exec": {spec: spec("+"), positional: 1, newRoot: true}}},
	"opam":   {verbs: map[string]*launcher{"exec": runVerb("switch=", "set-switch", "set-root", "root=", "y|yes", "q|quiet", "v|verbose")}, remove: []string{"remove", "uninstall"}},
	"stack":  {global: spec("+", "stack-yaml=", "resolver=", "verbosity=", "silent", "h|help"), verbs: map[string]*launcher{"exec": runVerb("package=", "rts-options=", "cwd=", "no-ghc-package-path", "no-stack-exe")}},
	"cabal":  {verbs: map[string]*launcher{"exec": runVerb("project-file=", "builddir=", "v|verbose=")}},
	"dotenv": {verbs: map[string]*launcher{"": {spec: spec("", "e=", "v=", "c?", "p=", "o", "debug", "h|help"), after: true}}},
	"nix-shell": {verbs: map[string]*launcher{"": {spec: spec("", "run=", "command=", "p|packages", "pure", "A|attr=", "I=", "arg==",
		"argstr==", "keep=", "E|expr", "i=", "impure", "option==", "show-trace", "v|verbose", "Q|no-build-output", "j|max-jobs=",
		"cores=", "K|keep-failed", "k|keep-going", "packages"), code: []string{"run", "command"}, data: true}}},
	"conda-run": {verbs: map[string]*launcher{"": condaRun}},
}

var condaRun = runVerb("n|name=", "p|prefix=", "cwd=", "live-stream", "no-capture-output", "v|verbose", "debug-wrapper-scripts", "h|help")

func init() {
	condaRun.chdir = []string{"cwd"}
	runners["dotenv"].verbs[""].data = false
}

// ruleRunner: project runners whose verbs run a command, and their
// removal and publishing verbs, after their global options.
func ruleRunner(c *cmd) {
	r := runners[c.name]
	g := parseOpts(orPlain(r.global), c.args, 1)
	c.explain(&g)
	if l, ok := r.verbs[""]; ok {
		// The program itself runs its operands (uvx PROG, dotenv -- CMD).
		c.launch(l, 1)
		return
	}
	if len(g.operands) == 0 || !g.operands[0].Static {
		return
	}
	verb := g.operands[0].Value
	at := g.end
	if l, ok := r.verbs[verb]; ok {
		if d, ok := g.value(r.chdir...); ok {
			defer c.w.chdir(c.idx, d)()
		}
		c.launch(l, at+1)
		return
	}
	switch {
	case slicesHas(r.remove, verb):
		c.find(clsPkgRemove, c.span)
	case slicesHas(r.publish, verb):
		p := parseOpts(spec("", "dry-run?", "n"), c.args, at+1)
		if !p.flagOn(r.dryRun...) {
			c.findDetail(clsPkgPublish, c.span, c.name+" "+verb)
		}
	case verb == "pip" && len(g.operands) > 1 && g.operands[1].Value == "uninstall",
		verb == "tool" && len(g.operands) > 1 && g.operands[1].Value == "uninstall":
		c.find(clsPkgRemove, c.span)
	case verb == "tool" && len(g.operands) > 1 && g.operands[1].Value == "run":
		c.launch(uvRun, g.end+2)
	}
}
