package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Patterns across commands: fork bombs (recognised by structure, not by
// name), chmod +x then run, a secret piped or substituted into a sender.

// funcDef is a function the line defined, with the text it was parsed in.
type funcDef struct {
	decl *syntax.FuncDecl
	lvl  *level
	// usesPos caches positional: 0 unknown, 1 no, 2 yes.
	usesPos uint8
}

// positional reports whether the body reads its arguments as positional
// parameters and never changes them (shift, set).
func (fd *funcDef) positional() bool {
	if fd.usesPos == 0 {
		fd.usesPos = 1
		if usesPositional(fd.decl.Body) && !setsPositional(fd.decl.Body) {
			fd.usesPos = 2
		}
	}
	return fd.usesPos == 2
}

// forkBomb is forkBomb(fd), remembered per declaration.
func (w *walker) forkBomb(fd *funcDef) bool {
	if bomb, ok := w.bombs[fd.decl]; ok {
		return bomb
	}
	if w.bombs == nil {
		w.bombs = map[*syntax.FuncDecl]bool{}
	}
	bomb := w.reachesItself(fd.decl, map[*syntax.FuncDecl]bool{}, false)
	w.bombs[fd.decl] = bomb
	return bomb
}

// reachesItself reports whether the function start, called from fd's
// body (directly or through other functions of the line), calls itself
// again through a call that forks a process: in the background, in a
// pipeline, in a subshell or a substitution. Recursion that forks grows
// the number of processes without bound; plain recursion only deepens
// the shell's stack.
func (w *walker) reachesItself(start *syntax.FuncDecl, seen map[*syntax.FuncDecl]bool, forked bool) bool {
	type frame struct {
		fd     *syntax.FuncDecl
		forked bool
	}
	stack := []frame{{start, forked}}
	visited := map[*syntax.FuncDecl]uint8{}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		mark := uint8(1)
		if f.forked {
			mark = 2
		}
		if visited[f.fd]&mark != 0 {
			continue
		}
		visited[f.fd] |= mark
		for _, call := range calls(f.fd) {
			next, ok := w.funcs[call.name]
			if !ok {
				continue
			}
			fk := f.forked || call.forks
			if next.decl == start && fk {
				return true
			}
			stack = append(stack, frame{next.decl, fk})
		}
	}
	_ = seen
	return false
}

// funcCall is a call from a function body to a name.
type funcCall struct {
	name  string
	forks bool
}

// calls lists the calls in a function body, and whether each forks.
func calls(fd *syntax.FuncDecl) []funcCall {
	var out []funcCall
	var walk func(n syntax.Node, forks bool)
	walk = func(n syntax.Node, forks bool) {
		walkTree(n, func(m syntax.Node) bool {
			switch m := m.(type) {
			case *syntax.Stmt:
				if m != n && (m.Background || m.Coprocess) {
					walk(m.Cmd, true)
					for _, r := range m.Redirs {
						walk(r, true)
					}
					return false
				}
			case *syntax.BinaryCmd:
				if m.Op == syntax.Pipe || m.Op == syntax.PipeAll {
					walk(m.X, true)
					walk(m.Y, true)
					return false
				}
			case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
				if m != n {
					walkChildren(m, func(c syntax.Node) { walk(c, true) })
					return false
				}
			case *syntax.CallExpr:
				if len(m.Args) > 0 {
					if name := m.Args[0].Lit(); name != "" {
						out = append(out, funcCall{name, forks})
					}
				}
			}
			return true
		})
	}
	walk(fd.Body, false)
	return out
}

// walkChildren calls f on the statements inside a subshell or
// substitution.
func walkChildren(n syntax.Node, f func(syntax.Node)) {
	var list []*syntax.Stmt
	switch n := n.(type) {
	case *syntax.Subshell:
		list = n.Stmts
	case *syntax.CmdSubst:
		list = n.Stmts
	case *syntax.ProcSubst:
		list = n.Stmts
	}
	for _, s := range list {
		f(s)
	}
}

// loopBomb reports a loop that never ends and starts a process in the
// background on every turn without waiting or sleeping: until false; do
// sh & done.
func loopBomb(n syntax.Node) bool {
	var cond []*syntax.Stmt
	var body []*syntax.Stmt
	until := false
	switch l := n.(type) {
	case *syntax.WhileClause:
		cond, body, until = l.Cond, l.Do, l.Until
	case *syntax.ForClause:
		if cs, ok := l.Loop.(*syntax.CStyleLoop); ok && cs.Cond == nil {
			body = l.Do
		} else {
			return false
		}
	default:
		return false
	}
	if cond != nil && !constantLoop(cond, until) {
		return false
	}
	bg, paced := false, false
	for _, st := range body {
		walkTree(st, func(m syntax.Node) bool {
			switch m := m.(type) {
			case *syntax.Stmt:
				if m.Background {
					bg = true
				}
			case *syntax.CallExpr:
				if len(m.Args) > 0 {
					switch m.Args[0].Lit() {
					case "sleep", "wait", "read", "break", "exit", "return", "timeout", "inotifywait", "select", "usleep":
						paced = true
					}
				}
			}
			return true
		})
	}
	return bg && !paced
}

// constantLoop reports a loop condition that never ends the loop.
func constantLoop(cond []*syntax.Stmt, until bool) bool {
	if len(cond) != 1 {
		return false
	}
	switch c := cond[0].Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		switch c.Args[0].Lit() {
		case "true", ":":
			return !until && !cond[0].Negated
		case "false":
			return until && !cond[0].Negated
		case "[", "test":
			return !until && len(c.Args) <= 3 && len(c.Args) >= 2 && c.Args[1].Lit() != "" && c.Args[1].Lit() != "]"
		}
	case *syntax.ArithmCmd:
		if lit, ok := c.X.(*syntax.Word); ok && lit.Lit() != "" && lit.Lit() != "0" {
			return !until
		}
	}
	return false
}

// structural finds patterns across commands once the walk is done.
func (w *walker) structural() {
	made := map[string]int{}
	for i := range w.a.Commands {
		c := &w.a.Commands[i]
		if c.Name() == "chmod" && len(c.Argv) > 2 {
			mode := c.Argv[1].Value
			if strings.Contains(mode, "+x") || (numericMode().MatchString(mode) && len(mode) >= 3 && strings.ContainsAny(mode[len(mode)-3:len(mode)-2], "1357")) {
				for _, t := range c.Argv[2:] {
					made[w.absPath(t.Value)] = i
				}
			}
			continue
		}
		if len(c.Argv) == 0 || !c.Argv[0].Static || !strings.Contains(c.Argv[0].Value, "/") {
			continue
		}
		if j, ok := made[w.absPath(path.Clean(c.Argv[0].Value))]; ok {
			w.find(-1, clsChmodRun, w.a.Commands[j].Span.join(c.Span))
		}
	}
}

// exfil flags a secret read in an earlier stage of a pipeline (or inside
// a substitution of an argument) reaching a sender.
func (w *walker) exfil(secretFrom, secretTo int, sender int) {
	for i := secretFrom; i < secretTo && i < len(w.meta); i++ {
		if w.meta[i].secret != "" {
			w.findDetail(sender, clsExfilSecret, w.a.Commands[sender].Span, strings.TrimSuffix(w.meta[i].secret, " "))
			return
		}
	}
}

// infinite are producers whose output never ends.
var infinite = map[string]bool{"yes": true}

// xargsBomb flags an endless producer feeding xargs with unbounded
// parallelism (-P0) that runs shells: a process per input line, without
// limit.
func (w *walker) xargsBomb(stages []*syntax.Stmt, starts []int) {
	endless := false
	for i := range len(stages) - 1 {
		for c := starts[i]; c < starts[i+1]; c++ {
			cm := &w.a.Commands[c]
			k := cm.key()
			if infinite[k] || k == "cat" && len(cm.Argv) == 2 && (cm.Argv[1].Value == "/dev/zero" || cm.Argv[1].Value == "/dev/urandom") {
				endless = true
			}
		}
		if !endless {
			continue
		}
		for c := starts[i+1]; c < starts[i+2]; c++ {
			cm := &w.a.Commands[c]
			if cm.key() != "xargs" {
				continue
			}
			p := parseOpts(launchers["xargs"].spec, cm.Argv, 1)
			if v, ok := p.value("P"); ok && (v.Value == "0" || len(v.Value) > 3) {
				w.find(-1, clsForkBomb, cm.Span)
			}
		}
	}
}
