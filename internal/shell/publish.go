package shell

import "strings"

// Family packages, publishing: sending a package, an image or a release to
// a registry others install from. It cannot be taken back (a version once
// published stays published or leaves a hole when yanked) and it reaches
// outside the machine, so it is dangerous; a dry run is not.

var clsPkgPublish = def("packages", "pkg.publish", TierDangerous,
	"publishes, yanks or unpublishes a package, image or release in a registry (external, cannot be taken back)")

var _ = family(func() {
	register("packages", ruleTwine, "twine")
	register("packages", ruleFlit, "flit")
	register("packages", ruleMaven, "mvn", "mvnw")
	register("packages", ruleGradle, "gradle", "gradlew")
	register("packages", ruleDotnet, "dotnet")
	register("packages", ruleVsce, "vsce", "ovsx")
	register("packages", ruleLerna, "lerna")
	register("packages", ruleGoreleaser, "goreleaser")
	register("packages", ruleDartPub, "dart", "flutter")
	register("packages", ruleMix, "mix")
})

// flagOn reports whether one of the named options is set and not turned
// off by its value (--dry-run, but not --dry-run=false).
func (p *opts) flagOn(names ...string) bool {
	return p.anyOn(func(h optHit) bool {
		if h.hasVal {
			switch strings.ToLower(h.val.Value) {
			case "false", "0", "no", "off":
				return false
			}
		}
		return h.set()
	}, names...)
}

// publish judges npm, pnpm, yarn and bun: publish, unpublish and
// deprecate change what the registry serves (not with --dry-run).
func (c *cmd) publish(p *opts, ops []Arg) {
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Value
	if c.name == "yarn" && verb == "npm" && len(ops) > 1 {
		verb = ops[1].Value
	}
	switch verb {
	case "publish", "unpublish", "deprecate", "undeprecate", "dist-tag":
		if verb == "dist-tag" && (len(ops) < 2 || ops[1].Value == "ls" || ops[1].Value == "list") {
			return
		}
		if !p.flagOn("dry-run") {
			c.findDetail(clsPkgPublish, c.span, c.name+" "+verb)
		}
	}
}

var cargoPublishSpec = spec("", "n|dry-run", "no-verify", "allow-dirty", "index=", "registry=", "token=", "p|package=", "workspace",
	"exclude=", "target=", "target-dir=", "F|features=", "all-features", "no-default-features", "j|jobs=", "keep-going",
	"manifest-path=", "lockfile-path=", "frozen", "locked", "offline", "q|quiet", "v|verbose", "color=", "Z=", "config=", "h|help",
	"vers|version=", "undo")

// registryPublish judges cargo publish/yank/owner and gem push/yank (their
// verb is first, after global options).
func (c *cmd) registryPublish(verb string) {
	switch {
	case c.name == "cargo" && (verb == "publish" || verb == "yank" || verb == "owner"):
		at := 1
		for at < len(c.args) && c.args[at].Value != verb {
			at++
		}
		p := parseOpts(cargoPublishSpec, c.args, at+1)
		if !p.flagOn("n") {
			c.findDetail(clsPkgPublish, c.span, "cargo "+verb)
		}
	case c.name == "gem" && (verb == "push" || verb == "yank" || verb == "owner"):
		c.findDetail(clsPkgPublish, c.span, "gem "+verb)
	}
}

var twineSpec = spec("", "r|repository=", "repository-url=", "attestations", "s|sign", "sign-with=", "i|identity=", "u|username=",
	"p|password=", "non-interactive", "c|comment=", "config-file=", "skip-existing", "cert=", "client-cert=", "verbose",
	"disable-progress-bar", "h|help", "version")

// ruleTwine: twine upload sends distributions to PyPI (twine check does
// not).
func ruleTwine(c *cmd) {
	p := c.parse(twineSpec)
	if len(p.operands) > 0 && p.operands[0].Value == "upload" {
		c.findDetail(clsPkgPublish, c.span, "twine upload")
	}
}

func ruleFlit(c *cmd) {
	p := c.parse(spec("", "debug", "logo", "f|ini-file=", "repository=", "pypirc=", "format=", "no-use-vcs", "use-vcs", "h|help", "version"))
	if len(p.operands) > 0 && p.operands[0].Value == "publish" {
		c.findDetail(clsPkgPublish, c.span, "flit publish")
	}
}

var mavenSpec = spec("-", "D|define=", "P|activate-profiles=", "f|file=", "s|settings=", "gs|global-settings=", "pl|projects=",
	"am|also-make", "amd|also-make-dependents", "T|threads=", "B|batch-mode", "q|quiet", "X|debug", "U|update-snapshots",
	"o|offline", "e|errors", "N|non-recursive", "rf|resume-from=", "l|log-file=", "t|toolchains=", "v|version", "h|help",
	"ntp|no-transfer-progress", "fae|fail-at-end", "ff|fail-fast", "fn|fail-never", "C|strict-checksums", "c|lax-checksums",
	"V|show-version", "npu|no-plugin-updates", "cpu|check-plugin-updates", "llr|legacy-local-repository", "emp|encrypt-master-password=",
	"ep|encrypt-password=", "gt|global-toolchains=", "nsu|no-snapshot-updates", "color=")

// ruleMaven: the deploy phase and release:perform upload artifacts.
func ruleMaven(c *cmd) {
	p := c.parse(mavenSpec)
	for _, op := range p.operands {
		switch v := op.Value; {
		case v == "deploy" || strings.HasSuffix(v, ":deploy") || strings.HasSuffix(v, ":deploy-file") || v == "release:perform" ||
			strings.HasSuffix(v, ":release-perform"):
			c.findDetail(clsPkgPublish, op.Span, "mvn "+v)
			return
		}
	}
}

var gradleSpec = spec("", "P|project-prop=", "D|system-prop=", "x|exclude-task=", "p|project-dir=", "b|build-file=", "c|settings-file=",
	"g|gradle-user-home=", "I|init-script=", "console=", "warning-mode=", "q|quiet", "i|info", "d|debug", "w|warn", "s|stacktrace",
	"S|full-stacktrace", "m|dry-run", "offline", "daemon", "no-daemon", "parallel", "no-parallel", "scan", "no-scan", "build-cache",
	"no-build-cache", "continue", "configuration-cache", "no-configuration-cache", "refresh-dependencies", "rerun-tasks",
	"t|continuous", "profile", "max-workers=", "priority=", "include-build=", "dependency-verification=", "F=", "h|help", "v|version", "a|no-rebuild")

// ruleGradle: publish tasks upload artifacts (not to the local Maven
// repository; not with --dry-run).
func ruleGradle(c *cmd) {
	p := c.parse(gradleSpec)
	if p.has("m") {
		return
	}
	for _, op := range p.operands {
		task := op.Value[strings.LastIndexByte(op.Value, ':')+1:]
		if strings.HasPrefix(task, "publish") && !strings.Contains(task, "MavenLocal") || task == "uploadArchives" || task == "bintrayUpload" {
			c.findDetail(clsPkgPublish, op.Span, "gradle "+op.Value)
			return
		}
	}
}

// ruleDotnet: dotnet nuget push/delete (dotnet publish only builds).
func ruleDotnet(c *cmd) {
	p := c.parse(spec("+", "d|diagnostics", "h|help", "info", "version", "list-sdks", "list-runtimes"))
	if len(p.operands) > 1 && p.operands[0].Value == "nuget" && (p.operands[1].Value == "push" || p.operands[1].Value == "delete") {
		c.findDetail(clsPkgPublish, c.span, "dotnet nuget "+p.operands[1].Value)
	}
}

// ruleVsce: vsce and ovsx publish an editor extension to a marketplace.
func ruleVsce(c *cmd) {
	p := c.parse(spec("", "p|pat=", "i|packagePath=", "t|target=", "baseContentUrl=", "baseImagesUrl=", "githubBranch=",
		"gitlabBranch=", "no-rewrite-relative-links", "pre-release", "allow-star-activation", "skip-duplicate", "yarn", "no-yarn",
		"no-dependencies", "h|help", "V|version", "r|registry="))
	if len(p.operands) > 0 && (p.operands[0].Value == "publish" || p.operands[0].Value == "unpublish") {
		c.findDetail(clsPkgPublish, c.span, c.name+" "+p.operands[0].Value)
	}
}

func ruleLerna(c *cmd) {
	p := c.parse(spec("", "loglevel=", "concurrency=", "reject-cycles", "no-progress", "no-sort", "max-buffer=", "h|help", "v|version"))
	if len(p.operands) > 0 && p.operands[0].Value == "publish" {
		c.findDetail(clsPkgPublish, c.span, "lerna publish")
	}
}

// ruleGoreleaser: release publishes (not with --snapshot or
// --skip=publish).
func ruleGoreleaser(c *cmd) {
	p := c.parse(spec("", "f|config=", "clean", "snapshot", "skip=", "skip-publish", "p|parallelism=", "timeout=", "release-notes=",
		"auto-snapshot", "single-target", "nightly", "fail-fast", "split", "draft", "id=", "debug", "verbose", "h|help"))
	if len(p.operands) == 0 || p.operands[0].Value != "release" || p.has("snapshot", "skip-publish") {
		return
	}
	if v, ok := p.value("skip"); ok && strings.Contains(v.Value, "publish") {
		return
	}
	c.findDetail(clsPkgPublish, c.span, "goreleaser release")
}

// ruleDartPub: dart pub publish and flutter pub publish (not -n).
func ruleDartPub(c *cmd) {
	p := parseOpts(spec("", "n|dry-run", "f|force", "skip-validation", "directory|C=", "h|help", "v|verbose"), c.args, 1)
	if len(p.operands) > 1 && p.operands[0].Value == "pub" && p.operands[1].Value == "publish" && !p.has("n") {
		c.findDetail(clsPkgPublish, c.span, c.name+" pub publish")
	}
}

// ruleMix: mix hex.publish (not --dry-run).
func ruleMix(c *cmd) {
	p := parseOpts(spec("", "dry-run", "yes", "replace", "revert=", "organization=", "h|help"), c.args, 1)
	if len(p.operands) > 0 && (p.operands[0].Value == "hex.publish" || p.operands[0].Value == "hex.retire") && !p.has("dry-run") {
		c.findDetail(clsPkgPublish, c.span, "mix "+p.operands[0].Value)
	}
}
