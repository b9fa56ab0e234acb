package shell

import (
	"regexp"
	"strings"
	"sync"
)

// Family git: history and working-tree destruction (force pushes, hard
// resets, discards of uncommitted work, deletions of branches, tags,
// stashes and reflogs), and configuration that makes git run a program
// (-c, GIT_CONFIG_*, git config, aliases). git's own parser accepts any
// unique prefix of a long option and --no-X; so does this one.

var _ = family(func() {
	register("git", ruleGit, "git")
})

var gitGlobal = spec("+!", "C=", "c=", "git-dir=", "work-tree=", "namespace=", "exec-path?", "config-env=", "super-prefix=",
	"list-cmds=", "attr-source=", "p|paginate", "P|no-pager", "bare", "no-replace-objects", "no-lazy-fetch", "no-optional-locks",
	"no-advice", "literal-pathspecs", "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "html-path", "man-path", "info-path",
	"v|version", "h|help")

// gitSubs are the subcommands whose options the rules read.
var gitSubs = map[string]*optSpec{
	"push": spec("n", "f|force", "force-with-lease?", "force-if-includes", "d|delete", "mirror", "prune", "all|branches", "tags", "follow-tags",
		"atomic", "n|dry-run", "porcelain", "u|set-upstream", "q|quiet", "v|verbose", "progress", "verify", "recurse-submodules=",
		"o|push-option=", "receive-pack|exec=", "repo=", "4|ipv4", "6|ipv6", "signed?", "thin"),
	"reset": spec("n", "hard", "soft", "mixed", "merge", "keep", "q|quiet", "p|patch", "N|intent-to-add", "pathspec-from-file=",
		"pathspec-file-nul", "refresh", "recurse-submodules?"),
	"clean": spec("n", "f|force", "n|dry-run", "d", "x", "X", "i|interactive", "q|quiet", "e|exclude="),
	"checkout": spec("n", "b=", "B=", "orphan=", "f|force", "m|merge", "p|patch", "q|quiet", "t|track?", "detach", "l", "ours", "theirs",
		"conflict=", "ignore-other-worktrees", "overwrite-ignore", "pathspec-from-file=", "pathspec-file-nul", "recurse-submodules?",
		"progress", "overlay", "guess", "ignore-skip-worktree-bits"),
	"restore": spec("n", "s|source=", "S|staged", "W|worktree", "p|patch", "q|quiet", "ignore-unmerged", "ours", "theirs", "m|merge",
		"conflict=", "overlay", "recurse-submodules?", "progress", "pathspec-from-file=", "pathspec-file-nul", "ignore-skip-worktree-bits"),
	"switch": spec("n", "c|create=", "C|force-create=", "d|detach", "discard-changes", "f|force", "m|merge", "conflict=", "q|quiet",
		"progress", "t|track?", "guess", "orphan=", "ignore-other-worktrees", "recurse-submodules?"),
	"branch": spec("n", "d|delete", "D", "f|force", "m|move", "M", "c|copy", "C", "r|remotes", "a|all", "l|list", "v|verbose", "vv",
		"q|quiet", "t|track?", "u|set-upstream-to=", "unset-upstream", "edit-description", "contains?", "no-contains?", "merged?",
		"no-merged?", "sort=", "points-at=", "format=", "color?", "column?", "abbrev?", "show-current", "create-reflog",
		"i|ignore-case", "omit-empty", "recurse-submodules"),
	"tag": spec("n", "a|annotate", "s|sign", "u|local-user=", "f|force", "d|delete", "v|verify", "l|list", "n?", "m|message=", "F|file=",
		"e|edit", "cleanup=", "create-reflog", "sort=", "contains?", "no-contains?", "merged?", "no-merged?", "points-at=", "format=",
		"color?", "column?", "i|ignore-case", "omit-empty", "trailer="),
	"stash":      spec("n", "p|patch", "k|keep-index", "S|staged", "u|include-untracked", "a|all", "q|quiet", "m|message=", "index", "pathspec-from-file=", "pathspec-file-nul"),
	"reflog":     spec("n", "all", "expire=", "expire-unreachable=", "rewrite", "updateref", "stale-fix", "n|dry-run", "verbose", "single-worktree"),
	"gc":         spec("n", "prune?", "aggressive", "auto", "q|quiet", "force", "keep-largest-pack", "cruft", "max-cruft-size=", "expire-to=", "detach"),
	"prune":      spec("n", "n|dry-run", "v|verbose", "progress", "expire="),
	"update-ref": spec("n", "d", "m=", "no-deref", "create-reflog", "stdin", "z"),
	"clone": spec("n", "l|local", "no-hardlinks", "s|shared", "reference=", "reference-if-able=", "dissociate", "q|quiet", "v|verbose",
		"progress", "server-option=", "n|no-checkout", "reject-shallow", "bare", "mirror", "o|origin=", "b|branch=", "revision=",
		"u|upload-pack=", "template=", "c|config=", "depth=", "shallow-since=", "shallow-exclude=", "single-branch", "tags",
		"recurse-submodules|recursive?", "shallow-submodules", "remote-submodules", "j|jobs=", "separate-git-dir=", "filter=",
		"also-filter-submodules", "sparse", "bundle-uri=", "ref-format="),
	"config": spec("n", "global", "system", "local", "worktree", "f|file=", "blob=", "get", "get-all", "get-regexp", "get-urlmatch",
		"replace-all", "add", "unset", "unset-all", "rename-section", "remove-section", "l|list", "e|edit", "fixed-value", "t|type=",
		"bool", "int", "bool-or-int", "path", "expiry-date", "z|null", "name-only", "show-origin", "show-scope", "includes",
		"default=", "comment=", "get-color", "get-colorbool", "value="),
	"rebase": spec("n", "x|exec=", "onto=", "keep-base", "continue", "skip", "abort", "quit", "edit-todo", "show-current-patch",
		"i|interactive", "r|rebase-merges?", "autosquash", "autostash", "update-refs", "root", "fork-point", "q|quiet", "v|verbose",
		"stat", "n|no-stat", "verify", "s|strategy=", "X|strategy-option=", "S|gpg-sign?", "empty=", "keep-empty", "reapply-cherry-picks",
		"allow-empty-message", "m|merge", "apply", "C=", "ignore-whitespace", "whitespace=", "committer-date-is-author-date",
		"ignore-date|reset-author-date", "signoff", "f|force-rebase", "reschedule-failed-exec", "trailer="),
	"filter-branch": spec("n", "setup=", "subdirectory-filter=", "env-filter=", "tree-filter=", "index-filter=", "parent-filter=",
		"msg-filter=", "commit-filter=", "tag-name-filter=", "prune-empty", "original=", "d=", "f|force", "state-branch="),
	"difftool":  spec("n", "d|dir-diff", "y|no-prompt", "prompt", "rotate-to=", "skip-to=", "t|tool=", "tool-help", "symlinks", "x|extcmd=", "g|gui", "trust-exit-code"),
	"grep":      spec("n", "O|open-files-in-pager?", "e=", "f=", "A|after-context=", "B|before-context=", "C|context=", "m|max-count=", "threads=", "max-depth="),
	"fetch":     spec("n", "upload-pack=", "all", "prune", "P|prune-tags", "q|quiet", "v|verbose", "depth=", "j|jobs=", "f|force", "t|tags"),
	"pull":      spec("n", "upload-pack=", "rebase?", "q|quiet", "v|verbose", "f|force", "depth=", "ff", "ff-only", "s|strategy=", "X|strategy-option="),
	"ls-remote": spec("n", "upload-pack|exec=", "q|quiet", "h|heads", "t|tags", "refs", "get-url", "symref", "sort=", "o|server-option="),
	"archive":   spec("n", "remote=", "exec=", "o|output=", "format=", "prefix=", "l|list", "v|verbose", "worktree-attributes", "add-file=", "add-virtual-file=", "mtime="),
	"send-email": spec("n", "sendmail-cmd=", "smtp-server=", "to=", "cc=", "bcc=", "from=", "subject=", "in-reply-to=", "annotate",
		"compose", "dry-run", "confirm=", "smtp-user=", "smtp-pass=", "smtp-encryption=", "smtp-server-port=", "identity="),
	"worktree":  spec("n", "f|force", "b=", "B=", "detach", "lock", "reason=", "checkout", "q|quiet", "track", "guess-remote", "expire=", "n|dry-run", "v|verbose", "porcelain", "z"),
	"submodule": spec("n", "q|quiet", "recursive", "cached", "init", "remote", "f|force", "all"),
	"remote":    spec("n", "v|verbose", "t=", "m=", "f", "tags", "no-tags", "mirror?", "push", "add", "delete", "all", "n"),
	"rm":        spec("n", "f|force", "n|dry-run", "r", "cached", "ignore-unmatch", "sparse", "q|quiet", "pathspec-from-file=", "pathspec-file-nul"),
}

// gitProgramKeys are config keys whose value git runs as a program.
var gitProgramKeys = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(core\.(pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)|diff\.external|sequence\.editor|gpg\.(program|[a-z0-9]+\.program)|credential\.helper|credential\..*\.helper|pager\..*|alias\..*|diff\..*\.(textconv|command)|filter\..*\.(clean|smudge|process)|merge\..*\.driver|uploadpack\.packobjectshook|protocol\.ext\.allow|include\.path|includeif\..*\.path|remote\..*\.(uploadpack|receivepack|proxy|url|pushurl)|http\.proxy|sendemail\.(sendmailcmd|smtpserver)|instaweb\.httpd|web\.browser|browser\..*\.(cmd|path)|difftool\..*\.(cmd|path)|mergetool\..*\.(cmd|path)|man\..*\.(cmd|path)|receive\.procreceiverefs|status\.showuntrackedfiles|transfer\.fsckobjects|ssh\.variant|url\..*\.(insteadof|pushinsteadof)|submodule\..*\.update)$`)
})

// ruleGit reads git's global options (-C DIR, -c KEY=VALUE, …), then the
// subcommand with its own options; an alias given with -c is read as the
// git command it stands for.
// gitTree judges what git reads of the working tree it works in (-C
// DIR, --work-tree DIR, or here): add stores its pathspecs (all of the tree
// without one, or with -A), stash -u keeps the untracked files too. git
// -C ~/.ssh add . reads the keys; status and commit -a only look at
// what is tracked already.
func (c *cmd) gitTree(dirs []Arg, sub string, rest []Arg) {
	var specs []Arg
	all := false
	for _, a := range rest {
		switch {
		case a.Value == "-A" || a.Value == "--all" || sub == "stash" && (a.Value == "-u" || a.Value == "--include-untracked" || a.Value == "-a"):
			all = true
		case !strings.HasPrefix(a.Value, "-"):
			specs = append(specs, a)
		}
	}
	switch {
	case sub == "add" && (all || len(specs) == 0), sub == "stash" && all:
		c.tree(dirs, accRead)
	case sub == "add":
		var abs []Arg
		for _, a := range specs {
			if strings.HasPrefix(a.Value, "/") || strings.HasPrefix(a.Value, "~") {
				abs = append(abs, a)
			}
		}
		c.tree(append(abs, inDirs(dirs, specs)...), accRead)
	}
}

func ruleGit(c *cmd) {
	g := c.parse(gitGlobal)
	for _, v := range g.values("c") {
		c.gitConfig(v, "git -c")
	}
	for _, v := range g.values("config-env") {
		// KEY=ENVVAR: the value comes from the environment.
		key, _, _ := strings.Cut(v.Value, "=")
		if gitProgramKeys().MatchString(strings.ToLower(key)) {
			c.findDetail(clsGitConfigProgram, v.Span, key)
			c.opaqueDetail(v.Span, "git --config-env "+key+" takes a program from the environment")
		}
	}
	if len(g.unknown) > 0 {
		u := c.args[g.unknown[0]]
		c.opaqueDetail(u.Span, "git option "+u.Value+" is not known")
	}
	if len(g.operands) == 0 {
		return
	}
	subArg := g.operands[0]
	dirs := append(g.values("C"), g.values("work-tree")...)
	if len(dirs) == 0 {
		dirs = []Arg{{Value: ".", Static: true, Span: subArg.Span}}
	}
	c.gitTree(dirs, subArg.Value, c.args[g.end+1:])
	sub := subArg.Value
	at := g.end
	// An alias set on this line is the command it stands for.
	if body, ok := c.gitAlias(sub, g.values("c")); ok {
		if strings.HasPrefix(body, "!") {
			return // already judged as a program by gitConfig
		}
		ws := strings.Fields(body)
		if len(ws) == 0 || c.w.probes >= maxProbes {
			return
		}
		c.w.probes++
		args := []Arg{c.args[0]}
		for _, w := range ws {
			args = append(args, Arg{Value: w, Static: subArg.Static, Span: subArg.Span})
		}
		args = append(args, c.args[at+1:]...)
		c.run(args, "git alias "+sub)
		return
	}
	if !subArg.Static {
		c.opaqueDetail(subArg.Span, "the git subcommand is computed at run time")
		return
	}
	c.gitSub(sub, at)
	c.gitCarries(g, sub)
}

// gitCarries follows a secret through a repository: add, commit or
// stash of files that hold one puts it in the repository (the one at -C
// DIR, or here), and a later push of that repository sends it
// (cd ~/.ssh && git add . && git push URL).
func (c *cmd) gitCarries(g opts, sub string) {
	repo := "."
	if d := g.values("C"); len(d) > 0 {
		if !d[len(d)-1].Static {
			return
		}
		repo = d[len(d)-1].Value
	}
	if d := g.values("git-dir"); len(d) > 0 && d[len(d)-1].Static {
		// The repository itself, wherever its working tree is.
		repo = d[len(d)-1].Value
	}
	key := "git:" + c.w.pathKey(repo)
	switch sub {
	case "add", "commit", "stash":
		if secret := c.w.meta[c.idx].secret; secret != "" {
			c.w.taint(key, strings.TrimSuffix(secret, " "))
		}
	case "push":
		if what, ok := c.w.tainted[key]; ok {
			c.findDetail(clsExfilSecret, c.span, what+", added to the repository pushed")
		}
	}
}

// gitAlias returns the value of alias.NAME set with -c on this line.
func (c *cmd) gitAlias(name string, cfg []Arg) (string, bool) {
	body, found := "", false
	for _, v := range cfg {
		k, val, _ := strings.Cut(v.Value, "=")
		if strings.EqualFold(k, "alias."+name) {
			body, found = val, true
		}
	}
	return body, found
}

// gitConfig judges a KEY=VALUE given to git: keys that run programs.
func (c *cmd) gitConfig(a Arg, how string) {
	key, val, _ := strings.Cut(a.Value, "=")
	low := strings.ToLower(key)
	if !gitProgramKeys().MatchString(low) {
		return
	}
	switch {
	case strings.HasPrefix(low, "alias."):
		if !strings.HasPrefix(val, "!") {
			return // read as a git command where it is used
		}
		val = val[1:]
	case low == "include.path" || strings.HasPrefix(low, "includeif."):
		c.findDetail(clsGitConfigProgram, a.Span, key+" includes configuration from "+val)
		return
	case strings.HasPrefix(low, "url.") && (strings.HasSuffix(low, ".insteadof") || strings.HasSuffix(low, ".pushinsteadof")) ||
		strings.HasPrefix(low, "remote.") && (strings.HasSuffix(low, ".url") || strings.HasSuffix(low, ".pushurl")):
		c.findDetail(clsGitRemoteURL, a.Span, key+" = "+val)
		return
	case strings.HasPrefix(low, "url.") || low == "http.proxy" || strings.HasPrefix(low, "remote.") && strings.HasSuffix(low, ".proxy") ||
		low == "status.showuntrackedfiles" || low == "transfer.fsckobjects" || low == "ssh.variant" || low == "protocol.ext.allow" ||
		strings.HasPrefix(low, "submodule."):
		if low == "protocol.ext.allow" && val != "never" {
			c.findDetail(clsGitConfigProgram, a.Span, key)
		}
		if strings.HasPrefix(low, "submodule.") && strings.HasPrefix(val, "!") {
			c.programOption(Arg{Value: val[1:], Static: a.Static, Span: a.Span}, how+" "+key)
		}
		return
	case low == "core.hookspath":
		c.findDetail(clsGitConfigProgram, a.Span, "hooks from "+val)
		return
	}
	if strings.HasPrefix(low, "credential.") {
		// A helper starting with "!" is shell code; another is a program
		// git runs as git-credential-NAME (or a path).
		val = strings.TrimPrefix(val, "!")
	}
	prog := a
	prog.Value, prog.off = val, 0
	if !knownHelper(prog) {
		c.findDetail(clsGitConfigProgram, a.Span, key)
	}
	c.programOption(prog, how+" "+key)
}

// gitSub judges one subcommand with its arguments (from argv index at).
func (c *cmd) gitSub(sub string, at int) {
	s := gitSubs[sub]
	var p opts
	if s != nil {
		p = parseOpts(s, c.args, at+1)
		if c.w.opts.Explain {
			c.w.a.Commands[c.idx].Parse = sub + ": " + p.describe()
		}
	}
	ops := p.operands
	switch sub {
	case "push":
		if p.has("f") || p.has("force-with-lease") || p.has("force-if-includes") {
			c.find(clsGitForcePush, c.span)
		}
		for _, op := range ops[min(1, len(ops)):] {
			if strings.HasPrefix(op.Value, "+") {
				c.find(clsGitForcePush, op.Span)
			}
			if strings.HasPrefix(op.Value, ":") && len(op.Value) > 1 {
				c.find(clsGitRemoteDelete, op.Span)
			}
		}
		if p.has("d", "mirror", "prune") {
			c.find(clsGitRemoteDelete, c.span)
		}
		for _, v := range p.values("receive-pack") {
			c.programOption(v, "git push --receive-pack")
		}
		c.gitRemoteURLs(ops)
		if len(ops) > 0 && gitURL(ops[0]) {
			c.findDetail(clsGitRemoteURL, ops[0].Span, ops[0].Value)
		}
	case "remote":
		// git remote add NAME URL, git remote set-url [--push] NAME URL
		if len(ops) >= 3 && (ops[0].Value == "add" || ops[0].Value == "set-url") {
			u := ops[len(ops)-1]
			c.findDetail(clsGitRemoteURL, u.Span, u.Value)
		}
	case "reset":
		switch {
		case p.has("hard"):
			c.find(clsGitResetHard, c.span)
		case p.has("merge", "keep"):
			c.find(clsGitDiscard, c.span)
		}
	case "clean":
		if !p.has("n") && (p.has("f") || !p.has("i")) {
			c.find(clsGitClean, c.span)
		}
	case "checkout":
		switch {
		case p.has("f") && !p.has("b", "B", "orphan"):
			c.find(clsGitDiscard, c.span)
		case p.has("p"):
			c.find(clsGitDiscard, c.span)
		case p.dashdash >= 0 && len(c.args) > p.dashdash+1:
			c.find(clsGitDiscard, c.span)
		case p.has("b", "B", "orphan", "detach"):
		case len(ops) >= 2 || len(ops) == 1 && (ops[0].Value == "." || ops[0].Glob || strings.HasPrefix(ops[0].Value, "./") || strings.HasPrefix(ops[0].Value, ":/")):
			c.find(clsGitDiscard, c.span)
		}
	case "restore":
		if !p.has("S") || p.has("W") {
			c.find(clsGitDiscard, c.span)
		}
	case "switch":
		if p.has("f", "discard-changes") {
			c.find(clsGitDiscard, c.span)
		}
		if p.has("C") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "branch":
		if p.has("D") || p.has("d") && p.has("f") {
			c.find(clsGitBranchDelete, c.span)
		}
		if p.has("M") || p.has("C") || (p.has("m", "c") && p.has("f")) {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "tag":
		if p.has("d") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "stash":
		if len(ops) > 0 && (ops[0].Value == "drop" || ops[0].Value == "clear") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "reflog":
		if len(ops) > 0 && (ops[0].Value == "expire" || ops[0].Value == "delete") && !p.has("n") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "gc":
		if v, ok := p.value("prune"); ok && (v.Value == "now" || v.Value == "all") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "prune":
		if !p.has("n") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "update-ref":
		if p.has("d") || p.has("stdin") {
			c.find(clsGitHistoryDelete, c.span)
		}
	case "filter-branch", "filter-repo":
		c.find(clsGitRewrite, c.span)
		for _, o := range []string{"env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter", "setup"} {
			for _, v := range p.values(o) {
				c.code(v, "git filter-branch --"+o)
			}
		}
	case "config":
		c.gitConfigCmd(&p)
	case "clone":
		if len(ops) >= 2 {
			c.writes(ops[1:2])
		}
		for _, v := range p.values("u") {
			c.programOption(v, "git clone --upload-pack")
		}
		for _, v := range p.values("c") {
			c.gitConfig(v, "git clone -c")
		}
		for _, v := range p.values("template") {
			c.findDetail(clsGitConfigProgram, v.Span, "hooks from the template "+v.Value)
		}
		c.gitRemoteURLs(ops)
	case "fetch", "pull", "ls-remote":
		for _, v := range p.values("upload-pack") {
			c.programOption(v, "git "+sub+" --upload-pack")
		}
		c.gitRemoteURLs(ops)
	case "archive":
		for _, v := range p.values("exec") {
			c.programOption(v, "git archive --exec")
		}
		c.writes(p.values("o"))
	case "rebase":
		for _, v := range p.values("x") {
			c.code(v, "git rebase --exec")
		}
	case "difftool", "mergetool":
		for _, v := range p.values("x") {
			c.programOption(v, "git difftool --extcmd")
		}
	case "grep":
		for _, v := range p.values("O") {
			c.programOption(v, "git grep -O")
		}
	case "send-email":
		for _, v := range p.values("sendmail-cmd") {
			c.programOption(v, "git send-email --sendmail-cmd")
		}
		for _, v := range p.values("smtp-server") {
			if strings.HasPrefix(v.Value, "/") {
				c.programOption(v, "git send-email --smtp-server")
			}
		}
	case "submodule":
		if len(ops) > 0 && ops[0].Value == "foreach" && len(ops) > 1 {
			c.codeText(ops[1:], "git submodule foreach")
		}
		if len(ops) > 0 && ops[0].Value == "deinit" && p.has("f") {
			c.find(clsGitDiscard, c.span)
		}
	case "bisect":
		if len(c.args) > at+2 && c.args[at+1].Value == "run" {
			c.run(c.args[at+2:], "git bisect run")
		}
	case "worktree":
		if len(ops) > 0 && ops[0].Value == "remove" && p.has("f") {
			c.find(clsGitDiscard, c.span)
		}
	case "rm":
		// git rm -f removes files with changes not committed.
		if p.has("f") && !p.has("cached") {
			c.find(clsGitDiscard, c.span)
		}
	case "credential":
		if len(c.args) > at+1 && c.args[at+1].Value == "fill" {
			c.findDetail(clsSecretRead, c.span, "git credential fill prints stored credentials")
		}
	case "credential-store", "credential-cache":
		c.findDetail(clsSecretRead, c.span, "git "+sub)
	}
}

// gitRemoteURLs: an ext:: remote runs a program.
func (c *cmd) gitRemoteURLs(ops []Arg) {
	for _, op := range ops {
		if after, ok := strings.CutPrefix(op.Value, "ext::"); ok {
			c.programOption(sub(op, len(op.Value)-len(after)), "git ext::")
		}
	}
}

// gitURL reports a push target named by URL or path rather than by a
// configured remote: scheme://, scp-like user@host:path, or a path.
func gitURL(a Arg) bool {
	v := a.Value
	if !a.Static {
		return true
	}
	if strings.Contains(v, "://") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") {
		return true
	}
	host, _, ok := strings.Cut(v, ":")
	return ok && host != "" && !strings.ContainsAny(host, "/")
}

// gitConfigCmd: git config KEY VALUE (and git config set KEY VALUE) sets a
// key; -f FILE writes that file.
func (c *cmd) gitConfigCmd(p *opts) {
	ops := p.operands
	if len(ops) > 0 && (ops[0].Value == "set" || ops[0].Value == "add") {
		ops = ops[1:]
	}
	if p.has("l", "get", "get-all", "get-regexp", "get-urlmatch", "unset", "unset-all", "name-only", "get-color", "get-colorbool") ||
		len(ops) > 0 && (ops[0].Value == "get" || ops[0].Value == "list" || ops[0].Value == "unset") {
		return
	}
	for _, f := range p.values("f") {
		c.writes([]Arg{f})
	}
	if p.has("e") {
		c.find(clsGitConfigProgram, c.span)
		return
	}
	if len(ops) >= 2 {
		v := ops[1]
		v.Value, v.off = ops[0].Value+"="+ops[1].Value, 0
		c.gitConfig(v, "git config")
		if k := strings.ToLower(ops[0].Value); strings.HasPrefix(k, "alias.") && !strings.HasPrefix(ops[1].Value, "!") {
			// An alias without "!" is a git command: judge it as one.
			ws := strings.Fields(ops[1].Value)
			if len(ws) > 0 && c.w.probes < maxProbes {
				c.w.probes++
				args := []Arg{{Value: "git", Static: true, Span: c.span}}
				for _, w := range ws {
					args = append(args, Arg{Value: w, Static: ops[1].Static, Span: ops[1].Span})
				}
				c.run(args, "git alias "+k[len("alias."):])
			}
		}
	}
}
