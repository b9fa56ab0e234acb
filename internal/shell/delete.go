package shell

import (
	"slices"
	"strconv"
	"strings"
)

// Family delete: rm, find -delete, and the moves that delete.

var _ = family(func() {
	register("delete", ruleRm, "rm", "unlink", "rmdir")
	register("delete", ruleRimraf, "rimraf", "del-cli", "trash-empty")
})

var rimrafSpec = spec("", "G|glob", "no-glob", "preserve-root?", "no-preserve-root", "tmp=", "max-retries=", "retry-delay=",
	"backoff=", "impl=", "i|interactive", "I", "v|verbose", "q|quiet", "h|help", "version", "f|force", "all")

// ruleRimraf: rimraf (node's rm -rf, run through npx) and del-cli delete
// their operands recursively and without asking; trash-empty empties the
// trash.
func ruleRimraf(c *cmd) {
	if c.name == "trash-empty" {
		c.find(clsDeleteRecursive, c.span)
		return
	}
	p := c.parse(rimrafSpec)
	if p.has("h", "version") {
		return
	}
	args := []Arg{{Value: "rm", Static: true, Span: c.args[0].Span}, {Value: "-rf", Static: true, Span: c.args[0].Span}, {Value: "--", Static: true, Span: c.args[0].Span}}
	saved := c.args
	c.args = append(args, p.operands...)
	ruleRm(c)
	c.args = saved
}

var rmSpec = spec("", "f|force", "i", "I", "interactive?", "one-file-system", "no-preserve-root", "preserve-root?",
	"r|R|recursive", "d|dir", "v|verbose", "help", "version")

var rmdirSpec = spec("", "ignore-fail-on-non-empty", "p|parents", "v|verbose", "help", "version")

// ruleRm judges a delete by what its operands resolve to: the root, a
// system directory or the home directory recursively is hardline; other
// recursive deletes are dangerous unless confined to temporary
// directories; a plain delete of relative files is not dangerous.
func ruleRm(c *cmd) {
	if c.name == "rmdir" && hasWord(c.args, "/s", "/S") {
		c.find(clsWinDelete, c.span) // cmd's rmdir /s
		return
	}
	if c.name == "unlink" || c.name == "rmdir" {
		p := c.parse(rmdirSpec)
		c.writes(p.operands)
		return
	}
	p := c.parse(rmSpec)
	if p.has("help", "version") {
		return
	}
	recursive := p.has("r")
	force := p.has("f")
	ops := p.operands
	hard := false
	allTemp := len(ops) > 0
	linked := c.linkedEarlier()
	for _, op := range ops {
		r, ok := c.w.resolvePath(op)
		if recursive && ok {
			if cls := c.w.deleteTarget(r, op.Glob); cls != "" {
				c.findDetail(cls, op.Span, r)
				hard = true
				continue
			}
		}
		c.writes([]Arg{op})
		if recursive {
			c.deleteTree(op)
			if !ok {
				c.findDetail(clsDeleteUnknown, op.Span, op.Value)
			}
		}
		if !ok || !tempConfined(op, r, linked) || !writtenAbs(op) && !c.w.dir.moved {
			allTemp = false
		}
		// A relative operand is judged by where it leads only when that
		// is somewhere that matters (above); as written it is the
		// project's own file.
		written := isAbs(op.Value) || strings.HasPrefix(op.Value, "$")
		if ok && written && isAbs(r) && !isTemp(r) {
			c.findDetail(clsDeleteAbsolute, op.Span, r)
		}
	}
	if hard || allTemp {
		return
	}
	if recursive {
		c.find(clsDeleteRecursive, c.span)
		if force {
			c.find(clsDeleteForce, c.span)
		}
	}
	if !recursive {
		for _, op := range ops {
			if _, ok := c.w.resolvePath(op); !ok {
				// Whose file it is, is not known: it may be a protected one.
				c.findDetail(clsDeleteUnknown, op.Span, op.Value)
				break
			}
			if force && op.Value == "*" {
				c.find(clsDeleteForce, op.Span)
				break
			}
		}
	}
}

// findOpens judges what find -exec's command is given: every file of
// the trees at starts (the working directory without any), or, with
// -maxdepth 0 or 1, the starts or their entries (those -name names)
// only.
func (c *cmd) findOpens(starts []Arg, maxDepth int, name string) {
	if len(starts) == 0 {
		starts = []Arg{{Value: ".", Static: true, Span: c.span}}
	}
	switch maxDepth {
	case 0:
		c.reads(starts)
	case 1:
		for _, s := range starts {
			if s.Static && !s.Glob {
				c.reads([]Arg{{Value: strings.TrimSuffix(s.Value, "/") + "/" + name, Static: true, Glob: true, Span: s.Span}})
			} else {
				c.tree([]Arg{s}, accRead)
			}
		}
	default:
		c.tree(starts, accRead)
	}
}

// ruleFind handles find: -exec/-execdir/-ok/-okdir run commands, -delete
// deletes, -fprint and friends write files, and the start paths say how
// much.
// findVia is how find runs a command: a constant for each action.
func findVia(action string) string {
	switch action {
	case "-exec":
		return "find -exec"
	case "-execdir":
		return "find -execdir"
	case "-ok":
		return "find -ok"
	case "-okdir":
		return "find -okdir"
	}
	return "find " + action
}

// findStarts returns find's start paths (nil for none: the working
// directory), whether its options follow links, and the index of the
// expression after them.
func findStarts(args []Arg) ([]Arg, bool, int) {
	i := 1
	followsLinks := false // -H, -L, -follow: a start that is a link leads elsewhere
	for i < len(args) {
		v := args[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			followsLinks = v == "-H" || v == "-L" || followsLinks && v != "-P"
			i++
			continue
		}
		if v == "-D" {
			i += 2
			continue
		}
		if v == "--" { // ends find's options; the starts follow
			i++
		}
		break
	}
	s0 := min(i, len(args))
	for i < len(args) {
		v := args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ")" || v == "," {
			break
		}
		i++
	}
	i = min(i, len(args))
	starts := args[s0:i:i] // read only
	if len(starts) == 0 {
		starts = nil
	}
	return starts, followsLinks, i
}

func ruleFind(c *cmd) {
	starts, followsLinks, i := findStarts(c.args)
	for _, s := range starts {
		// Listing warden's own directory is reaching it, as ls is.
		if p, ok := c.w.argPath(s); ok {
			if cls, tier, d := c.w.pathClass(p, accRead); cls == clsWardenSelf {
				c.w.findTier(c.idx, cls, tier, s.Span, d)
			}
		}
	}
	deletes, opens := false, false
	maxDepth := -1
	names, name := 0, "" // the one -name pattern, if just one
	for i < len(c.args) {
		v := c.args[i].Value
		switch v {
		case "-follow":
			followsLinks = true
		case "-name":
			if i+1 < len(c.args) && c.args[i+1].Static && !strings.Contains(c.args[i+1].Value, "/") {
				names++
				name = c.args[i+1].Value
			}
		case "-maxdepth":
			if i+1 < len(c.args) && c.args[i+1].Static {
				if n, err := strconv.Atoi(c.args[i+1].Value); err == nil && n >= 0 {
					maxDepth = n
				}
			}
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.args) && c.args[j].Value != ";" && c.args[j].Value != "+" {
				j++
			}
			if j > i+1 {
				inner := c.run(c.args[i+1:j], findVia(v))
				if inner >= 0 {
					k := c.w.a.Commands[inner].key()
					switch k {
					case "rm", "shred", "unlink", "rmdir":
						deletes = true
					}
					// What -exec runs gets every file of the tree: a
					// reader (cat, base64, sh -c …) reads them all.
					opens = opens || !metadataOnly[k]
				} else {
					opens = true
				}
			}
			i = j
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(c.args) {
				c.writes(c.args[i+1 : i+2])
				i++
				if v == "-fprintf" {
					i++
				}
			}
		}
		i++
	}
	if opens {
		if names != 1 || slices.ContainsFunc(c.args, func(a Arg) bool { return a.Value == "-o" || a.Value == "!" || a.Value == "-not" || a.Value == "-or" }) {
			name = "*"
		}
		c.findOpens(starts, maxDepth, name)
	}
	if !deletes {
		return
	}
	allTemp := len(starts) > 0
	hard := false
	linked := c.linkedEarlier()
	for _, s := range starts {
		r, ok := c.w.resolvePath(s)
		if !ok || !tempConfined(s, r, linked) || !writtenAbs(s) || followsLinks {
			allTemp = false
		}
		if ok {
			if cls := c.w.deleteTarget(r, s.Glob); cls != "" {
				c.findDetail(cls, s.Span, r)
				hard = true
				continue
			}
		} else {
			c.findDetail(clsDeleteUnknown, s.Span, s.Value)
		}
		c.deleteTree(s)
	}
	if len(starts) == 0 {
		allTemp = false
		if r := c.w.cwd(); r != "" {
			allTemp = isTemp(r) && !followsLinks && !linked
			if cls := c.w.deleteTarget(r, false); cls != "" {
				c.findDetail(cls, c.span, r)
				hard = true
			}
		}
	}
	if !allTemp && !hard {
		c.find(clsDeleteFind, c.span)
	}
}

// tempConfined reports whether deleting operand a, resolved to r, stays
// in a temporary directory (/tmp/build, $TMPDIR/x, x after cd /tmp). Not
// when the path has a ".." (the kernel resolves it after the links before
// it, so its lexical clean is not where it leads), and not after a link
// was made earlier in the line: ln -s ~ /tmp/h; rm -rf /tmp/h/ empties the
// home directory through a path that reads as temporary. linked is
// linkedEarlier, worked out once per command.
func tempConfined(a Arg, r string, linked bool) bool {
	return isTemp(r) && !dotDot(a.Value) && !linked
}

// linkedEarlier reports a command earlier in the line that can make a
// link: ln in any form, cp -s/--symbolic-link, a command whose name is
// not known, and anything else not known to make none (a script, an
// interpreter, make, git clone and tar x all can). A path through such a
// link may lead anywhere.
func (c *cmd) linkedEarlier() bool {
	for i := range c.w.a.Commands[:min(c.idx, len(c.w.a.Commands))] {
		e := &c.w.a.Commands[i]
		if e.Span.Start <= c.span.Start && c.span.End <= e.Span.End {
			continue // a launcher of this very command (watch 'rm …')
		}
		k := e.key()
		switch {
		case k == "cp":
			for _, x := range e.Argv[1:] {
				if v := x.Value; strings.HasPrefix(v, "--sym") || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsRune(v, 's') {
					return true
				}
			}
		case !makesNoLinks[k]:
			return true
		}
	}
	return false
}

// makesNoLinks are programs that never create a symbolic link (shell
// builtins that move or print, and readers): a temporary delete after
// them stays temporary.
var makesNoLinks = map[string]bool{"cd": true, "pushd": true, "popd": true, "echo": true, "printf": true, "true": true,
	"false": true, ":": true, "pwd": true, "ls": true, "mkdir": true, "rmdir": true, "rm": true, "unlink": true, "test": true,
	"[": true, "[[": true, "cat": true, "head": true, "tail": true, "grep": true, "wc": true, "sort": true, "uniq": true,
	"date": true, "sleep": true, "touch": true, "export": true, "set": true, "unset": true, "du": true, "df": true,
	"stat": true, "file": true, "find": true, "which": true, "type": true, "id": true, "whoami": true}

// writtenAbs reports an operand written as an absolute place (/tmp/x,
// ~/x, $TMPDIR/x, a constant): a delete confined to a temporary directory
// names it. A relative one is the project's own, wherever it sits.
func writtenAbs(a Arg) bool {
	return isAbs(a.Value) || strings.HasPrefix(a.Value, "$")
}

// deleteTree judges what a recursive delete of a directory removes with
// it. What the protected-path table guards below it is destroyed, not
// planted: a floor there (a .cache/huggingface/token a project's .cache
// may hold) asks rather than denies; warden's own files stay hardline,
// and a protected path named itself (rm -rf ~/.ssh) keeps its tier.
func (c *cmd) deleteTree(a Arg) {
	p, ok := c.w.argPath(a)
	if !ok {
		return
	}
	cls, tier, d := c.w.treeClass(p, accWrite)
	if cls == "" {
		return
	}
	if tier == TierFloor {
		if own, _, _ := c.w.argClass(a, accWrite); own == "" {
			tier = TierDangerous
		}
	}
	c.w.findTier(c.idx, cls, tier, a.Span, d)
}
