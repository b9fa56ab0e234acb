package shell

import "strings"

// Family delete: rm, find -delete, and the moves that delete.

var _ = family(func() {
	register("delete", ruleRm, "rm", "unlink", "rmdir")
})

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
			c.tree([]Arg{op}, accWrite)
		}
		if !ok || !isTemp(r) || !writtenAbs(op) {
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

// ruleFind handles find: -exec/-execdir/-ok/-okdir run commands, -delete
// deletes, -fprint and friends write files, and the start paths say how
// much.
func ruleFind(c *cmd) {
	i := 1
	for i < len(c.args) {
		v := c.args[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
			continue
		}
		if v == "-D" {
			i += 2
			continue
		}
		break
	}
	var starts []Arg
	for i < len(c.args) {
		v := c.args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ")" || v == "," {
			break
		}
		starts = append(starts, c.args[i])
		i++
	}
	deletes := false
	for i < len(c.args) {
		v := c.args[i].Value
		switch v {
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.args) && c.args[j].Value != ";" && c.args[j].Value != "+" {
				j++
			}
			if j > i+1 {
				inner := c.run(c.args[i+1:j], "find "+v)
				if inner >= 0 {
					switch c.w.a.Commands[inner].key() {
					case "rm", "shred", "unlink", "rmdir":
						deletes = true
					}
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
	if !deletes {
		return
	}
	allTemp := len(starts) > 0
	hard := false
	for _, s := range starts {
		r, ok := c.w.resolvePath(s)
		if !ok || !isTemp(r) || !writtenAbs(s) {
			allTemp = false
		}
		if ok {
			if cls := c.w.deleteTarget(r, s.Glob); cls != "" {
				c.findDetail(cls, s.Span, r)
				hard = true
				continue
			}
		}
		c.tree([]Arg{s}, accWrite)
	}
	if len(starts) == 0 {
		allTemp = false
		if r := c.w.cwd(); r != "" {
			allTemp = isTemp(r)
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

// writtenAbs reports an operand written as an absolute place (/tmp/x,
// ~/x, $TMPDIR/x, a constant): a delete confined to a temporary directory
// names it. A relative one is the project's own, wherever it sits.
func writtenAbs(a Arg) bool {
	return isAbs(a.Value) || strings.HasPrefix(a.Value, "$")
}
