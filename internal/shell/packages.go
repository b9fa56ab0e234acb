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

// pkgManager is how a package manager is told to remove packages: a
// verb after its global options (dnf remove, pip uninstall), or an
// option (dpkg -r, pacman -R, rpm -e).
type pkgManager struct {
	spec   *optSpec
	verbs  []string // removal verbs
	flags  []string // removal options
	verb2  map[string][]string
	noFlag []string // options that make it a rehearsal (emerge -p)
}

var (
	dnfSpec = spec("", "c|config=", "d|debuglevel=", "e|errorlevel=", "installroot=", "releasever=", "setopt=", "enablerepo=",
		"disablerepo=", "repo|repoid=", "x|exclude=", "nogpgcheck", "y|assumeyes", "assumeno", "q|quiet", "v|verbose", "C|cacheonly",
		"refresh", "best", "nobest", "skip-broken", "allowerasing", "noautoremove", "downloadonly", "forcearch=", "color=", "comment=",
		"nodocs", "security", "bugfix", "4", "6", "advisory=", "bz=", "cve=", "sec-severity=", "disableplugin=", "enableplugin=",
		"R|randomwait=", "debugsolver", "obsoletes", "noplugins", "h|help", "version", "use-host-config", "dump-main-config")
	pipSpec = spec("", "proxy=", "retries=", "timeout=", "exists-action=", "trusted-host=", "cert=", "client-cert=", "cache-dir=", "log=",
		"python=", "v|verbose", "q|quiet", "isolated", "require-virtualenv", "no-cache-dir", "disable-pip-version-check", "no-color",
		"no-input", "keyring-provider=", "use-feature=", "use-deprecated=", "root-user-action=", "y|yes", "r|requirement=", "h|help", "V|version")
	gemSpec   = spec("", "config-file=", "backtrace", "debug", "norc", "q|quiet", "V|verbose", "h|help", "v|version", "a|all", "x|executables", "I|ignore-dependencies")
	cargoSpec = spec("", "config=", "Z=", "C=", "color=", "frozen", "locked", "offline", "v|verbose", "q|quiet", "list", "explain=", "V|version", "h|help")
	brewSpec  = spec("", "v|verbose", "d|debug", "q|quiet", "f|force", "h|help", "zap", "ignore-dependencies", "cask", "formula")
	apkSpec   = spec("", "X|repository=", "p|root=", "allow-untrusted", "q|quiet", "v|verbose", "i|interactive", "no-cache", "U|update-cache",
		"arch=", "cache-dir=", "keys-dir=", "repositories-file=", "wait=", "force-broken-world", "force-overwrite", "purge", "r|rdepends")
	zypperSpec = spec("", "n|non-interactive", "q|quiet", "v|verbose", "no-refresh", "R|root=", "r|repo=", "p|plus-repo=", "c|config=",
		"D|reposd-dir=", "gpg-auto-import-keys", "x|xmlout", "t|terse", "ignore-unknown", "h|help", "V|version", "y|no-confirm")
	dpkgSpec = spec("", "i|install", "r|remove", "P|purge", "l|list", "L|listfiles", "s|status", "S|search", "c|contents", "I|info",
		"x|extract==", "X|vextract==", "unpack", "configure", "a|pending", "R|recursive", "G|refuse-downgrade", "B|auto-deconfigure",
		"no-triggers", "root=", "admindir=", "instdir=", "D|debug=", "force-all", "force-remove-essential", "force-remove-reinstreq",
		"force-depends", "no-act|dry-run|simulate", "get-selections", "set-selections", "print-architecture", "h|help", "version")
	rpmSpec = spec("", "e|erase", "i|install", "U|upgrade", "F|freshen", "q|query", "V|verify", "nodeps", "allmatches", "noscripts",
		"root=", "dbpath=", "v|verbose", "h|hash", "a|all", "f|file", "p|package", "l|list", "test", "justdb", "force", "replacepkgs",
		"import", "checksig|K", "help", "version", "define|D=", "eval|E=")
	pacmanSpec = spec("", "R|remove", "S|sync", "Q|query", "U|upgrade", "D|database", "F|files", "T|deptest", "V|version", "h|help",
		"s|search|recursive", "n|nosave", "c|clean|cascade|changelog", "u|upgrades|unneeded|sysupgrade", "y|refresh", "w|downloadonly",
		"d|nodeps|deps", "k|check", "p|print", "q|quiet", "i|info", "l|list", "o|owns", "t|unrequired", "e|explicit", "g|groups",
		"m|foreign", "b|dbpath=", "r|root=", "noconfirm", "needed", "overwrite=", "asdeps", "asexplicit", "cachedir=", "config=", "ignore=")
	emergeSpec = spec("", "C|unmerge", "c|depclean", "P|prune", "p|pretend", "a|ask", "v|verbose", "q|quiet", "u|update", "D|deep",
		"N|newuse", "1|oneshot", "n|noreplace", "f|fetchonly", "s|search", "S|searchdesc", "k|usepkg", "K|usepkgonly", "b|buildpkg",
		"t|tree", "j|jobs?", "sync")
	nixEnvSpec = spec("", "e|uninstall", "i|install", "u|upgrade", "q|query", "f|file=", "A|attr", "p|profile=", "switch-profile|S=",
		"list-generations", "delete-generations", "rollback", "set-flag", "b", "P|preserve-installed", "r|remove-all", "dry-run")
	plainVerbs = spec("")
)

var pkgManagers = map[string]pkgManager{
	"dpkg": {spec: dpkgSpec, flags: []string{"r", "P", "force-remove-essential", "force-remove-reinstreq", "force-all"}, noFlag: []string{"no-act"}},
	"rpm":  {spec: rpmSpec, flags: []string{"e"}, noFlag: []string{"test"}},
	"yum":  {spec: dnfSpec, verbs: []string{"remove", "erase", "autoremove", "rm"}}, "dnf": {spec: dnfSpec, verbs: []string{"remove", "erase", "autoremove", "rm"}},
	"microdnf": {spec: dnfSpec, verbs: []string{"remove"}},
	"pacman":   {spec: pacmanSpec, flags: []string{"R"}, noFlag: []string{"p"}}, "yay": {spec: pacmanSpec, flags: []string{"R"}, noFlag: []string{"p"}},
	"paru": {spec: pacmanSpec, flags: []string{"R"}, noFlag: []string{"p"}},
	"apk":  {spec: apkSpec, verbs: []string{"del"}}, "zypper": {spec: zypperSpec, verbs: []string{"rm", "remove"}},
	"snap": {spec: plainVerbs, verbs: []string{"remove"}}, "brew": {spec: brewSpec, verbs: []string{"remove", "uninstall", "rm", "zap", "autoremove"}},
	"port": {spec: plainVerbs, verbs: []string{"uninstall"}}, "choco": {spec: plainVerbs, verbs: []string{"uninstall"}},
	"winget": {spec: plainVerbs, verbs: []string{"uninstall", "remove", "rm"}}, "scoop": {spec: plainVerbs, verbs: []string{"uninstall", "remove", "rm"}},
	"gem": {spec: gemSpec, verbs: []string{"uninstall", "cleanup"}}, "cargo": {spec: cargoSpec, verbs: []string{"uninstall"}},
	"pipx": {spec: plainVerbs, verbs: []string{"uninstall", "uninstall-all"}}, "pip": {spec: pipSpec, verbs: []string{"uninstall"}},
	"conda":      {spec: condaGlobal, verbs: []string{"remove", "uninstall"}, verb2: map[string][]string{"env": {"remove", "rm"}}},
	"mamba":      {spec: condaGlobal, verbs: []string{"remove", "uninstall"}, verb2: map[string][]string{"env": {"remove", "rm"}}},
	"micromamba": {spec: condaGlobal, verbs: []string{"remove", "uninstall"}, verb2: map[string][]string{"env": {"remove", "rm"}}},
	"nix-env":    {spec: nixEnvSpec, flags: []string{"e", "r"}, noFlag: []string{"dry-run"}},
	"nix": {spec: spec("", "extra-experimental-features=", "option==", "L|print-build-logs", "v|verbose", "quiet", "offline", "refresh", "impure"),
		verbs: []string{"collect-garbage"}, verb2: map[string][]string{"profile": {"remove", "rollback", "wipe-history"}, "store": {"delete", "gc"}}},
	"emerge":      {spec: emergeSpec, flags: []string{"C", "c", "P"}, noFlag: []string{"p"}},
	"pkg":         {spec: plainVerbs, verbs: []string{"delete", "remove", "autoremove"}},
	"xbps-remove": {spec: plainVerbs},
	"opkg":        {spec: plainVerbs, verbs: []string{"remove"}},
}

// rulePkg: the other managers' removal verbs and options, after their
// global options; publishing, conda run and nix shell -c.
func rulePkg(c *cmd) {
	m := pkgManagers[c.name]
	p := c.parse(m.spec)
	var ops []Arg
	for _, o := range p.operands {
		if !strings.HasPrefix(o.Value, "+") { // cargo +nightly
			ops = append(ops, o)
		}
	}
	first, second := "", ""
	if len(ops) > 0 {
		first = ops[0].Value
	}
	if len(ops) > 1 {
		second = ops[1].Value
	}
	remove := c.name == "xbps-remove" || slicesHas(m.verbs, first) || slicesHas(m.verb2[first], second) ||
		len(m.flags) > 0 && p.has(m.flags...)
	if p.has(m.noFlag...) {
		remove = false
	}
	switch c.name {
	case "gem", "cargo":
		c.registryPublish(first)
	case "conda", "mamba", "micromamba":
		if first == "run" {
			g := parseOpts(condaGlobal, c.args, 1)
			c.launch(condaRun, g.end+1)
		}
	case "nix":
		if first == "shell" || first == "develop" || first == "run" {
			np := parseOpts(nixRunSpec, c.args, 1)
			if v, ok := np.value("c"); ok {
				// The value's own word: inside a payload every word may
				// share one span (the payload's), so the span alone could
				// name argv[0] and run this command again.
				for i := 1; i < len(c.args); i++ {
					if a := c.args[i]; a.Span == v.Span && a.Value == v.Value {
						c.run(c.args[i:], "nix "+first+" -c")
						return
					}
				}
			}
		}
	}
	if remove {
		c.find(clsPkgRemove, c.span)
	}
}

// nixRunSpec reads nix shell/develop/run: -c PROG ARGS… runs PROG.
var nixRunSpec = spec("", "c|command=!", "extra-experimental-features=", "option==", "L|print-build-logs", "v|verbose", "quiet",
	"offline", "refresh", "impure", "i|ignore-environment", "k|keep=", "u|unset=", "expr=", "f|file=", "override-input==", "profile=",
	"phase=", "build", "check", "configure", "install", "installcheck", "unpack", "redirect==", "arg==", "argstr==")

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
// nodePrograms are npm/pnpm/yarn config keys whose value is a program
// the tool runs later.
var nodePrograms = map[string]bool{"script-shell": true, "shell": true, "editor": true, "browser": true, "git": true,
	"viewer": true, "node-options": true, "yarn-path": true, "yarnpath": true}

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
	case verb == "config" && len(ops) > 2 && (ops[1].Value == "set" || ops[1].Value == "add"):
		// A program the tool runs later (script-shell, editor, …) set
		// in its config runs as a program option does.
		key, val, ok := strings.Cut(ops[2].Value, "=")
		if !ok {
			if len(ops) < 4 {
				break
			}
			val = ops[3].Value
		}
		if nodePrograms[strings.ToLower(strings.TrimPrefix(key, "--"))] {
			v := ops[len(ops)-1]
			if ok {
				v = sub(ops[2], len(ops[2].Value)-len(val))
			}
			c.programOption(v, c.name+" config "+key)
		}
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
