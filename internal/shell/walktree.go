package shell

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
)

// walkTree is syntax.Walk for the walker's visitors: it calls f(node) and,
// if that returns true, walks the children of node in the same depth-first
// order as syntax.Walk (mvdan.cc/sh/v3, BSD-3-Clause, whose structure it
// follows). It differs in two ways that no visitor here can observe:
//
//   - it never calls f(nil) after the children (the visitors ignore it);
//   - it skips comments, which the parser does not keep (no KeepComments).
//
// syntax.Walk defers inside a loop, so every call of it pays for the
// runtime's defer machinery, and its callback escapes; on a script of
// functions, walking was a third of the analysis. Like syntax.Walk it
// panics on a node type it does not know, such as the BraceExp nodes that
// syntax.SplitBraces leaves behind, with the same message: the verdict of
// such an input (malformed, by Analyze's recover) does not change.
func walkTree(node syntax.Node, f func(syntax.Node) bool) {
	if !f(node) {
		return
	}
	switch n := node.(type) {
	case *syntax.File:
		walkStmts(n.Stmts, f)
	case *syntax.Comment:
	case *syntax.Stmt:
		if n.Cmd != nil {
			walkTree(n.Cmd, f)
		}
		for _, r := range n.Redirs {
			walkTree(r, f)
		}
	case *syntax.Assign:
		if n.Name != nil {
			walkTree(n.Name, f)
		}
		if n.Value != nil {
			walkTree(n.Value, f)
		}
		if n.Index != nil {
			walkTree(n.Index, f)
		}
		if n.Array != nil {
			walkTree(n.Array, f)
		}
	case *syntax.Redirect:
		if n.N != nil {
			walkTree(n.N, f)
		}
		walkTree(n.Word, f)
		if n.Hdoc != nil {
			walkTree(n.Hdoc, f)
		}
	case *syntax.CallExpr:
		for _, a := range n.Assigns {
			walkTree(a, f)
		}
		walkWords(n.Args, f)
	case *syntax.Subshell:
		walkStmts(n.Stmts, f)
	case *syntax.Block:
		walkStmts(n.Stmts, f)
	case *syntax.IfClause:
		walkStmts(n.Cond, f)
		walkStmts(n.Then, f)
		if n.Else != nil {
			walkTree(n.Else, f)
		}
	case *syntax.WhileClause:
		walkStmts(n.Cond, f)
		walkStmts(n.Do, f)
	case *syntax.ForClause:
		walkTree(n.Loop, f)
		walkStmts(n.Do, f)
	case *syntax.WordIter:
		walkTree(n.Name, f)
		walkWords(n.Items, f)
	case *syntax.CStyleLoop:
		if n.Init != nil {
			walkTree(n.Init, f)
		}
		if n.Cond != nil {
			walkTree(n.Cond, f)
		}
		if n.Post != nil {
			walkTree(n.Post, f)
		}
	case *syntax.BinaryCmd:
		walkTree(n.X, f)
		walkTree(n.Y, f)
	case *syntax.FuncDecl:
		if n.Name != nil {
			walkTree(n.Name, f)
		}
		for _, l := range n.Names {
			walkTree(l, f)
		}
		walkTree(n.Body, f)
	case *syntax.Word:
		walkParts(n.Parts, f)
	case *syntax.Lit:
	case *syntax.SglQuoted:
	case *syntax.DblQuoted:
		walkParts(n.Parts, f)
	case *syntax.CmdSubst:
		walkStmts(n.Stmts, f)
	case *syntax.ParamExp:
		if n.Flags != nil {
			walkTree(n.Flags, f)
		}
		if n.Param != nil {
			walkTree(n.Param, f)
		}
		if n.NestedParam != nil {
			walkTree(n.NestedParam, f)
		}
		if n.Index != nil {
			walkTree(n.Index, f)
		}
		if n.Slice != nil {
			if n.Slice.Offset != nil {
				walkTree(n.Slice.Offset, f)
			}
			if n.Slice.Length != nil {
				walkTree(n.Slice.Length, f)
			}
		}
		if n.Repl != nil {
			if n.Repl.Orig != nil {
				walkTree(n.Repl.Orig, f)
			}
			if n.Repl.With != nil {
				walkTree(n.Repl.With, f)
			}
		}
		if n.Exp != nil && n.Exp.Word != nil {
			walkTree(n.Exp.Word, f)
		}
	case *syntax.ArithmExp:
		walkTree(n.X, f)
	case *syntax.ArithmCmd:
		walkTree(n.X, f)
	case *syntax.BinaryArithm:
		walkTree(n.X, f)
		walkTree(n.Y, f)
	case *syntax.BinaryTest:
		walkTree(n.X, f)
		walkTree(n.Y, f)
	case *syntax.UnaryArithm:
		walkTree(n.X, f)
	case *syntax.UnaryTest:
		walkTree(n.X, f)
	case *syntax.ParenArithm:
		walkTree(n.X, f)
	case *syntax.FlagsArithm:
		walkTree(n.Flags, f)
		if n.X != nil {
			walkTree(n.X, f)
		}
	case *syntax.ParenTest:
		walkTree(n.X, f)
	case *syntax.CaseClause:
		walkTree(n.Word, f)
		for _, it := range n.Items {
			walkTree(it, f)
		}
	case *syntax.CaseItem:
		walkWords(n.Patterns, f)
		walkStmts(n.Stmts, f)
	case *syntax.TestClause:
		walkTree(n.X, f)
	case *syntax.DeclClause:
		for _, a := range n.Args {
			walkTree(a, f)
		}
	case *syntax.ArrayExpr:
		for _, e := range n.Elems {
			walkTree(e, f)
		}
	case *syntax.ArrayElem:
		if n.Index != nil {
			walkTree(n.Index, f)
		}
		if n.Value != nil {
			walkTree(n.Value, f)
		}
	case *syntax.ExtGlob:
		walkTree(n.Pattern, f)
	case *syntax.ProcSubst:
		walkStmts(n.Stmts, f)
	case *syntax.TimeClause:
		if n.Stmt != nil {
			walkTree(n.Stmt, f)
		}
	case *syntax.CoprocClause:
		if n.Name != nil {
			walkTree(n.Name, f)
		}
		walkTree(n.Stmt, f)
	case *syntax.LetClause:
		for _, e := range n.Exprs {
			walkTree(e, f)
		}
	case *syntax.TestDecl:
		walkTree(n.Description, f)
		walkTree(n.Body, f)
	default:
		panic(fmt.Sprintf("syntax.Walk: unexpected node type %T", node))
	}
}

func walkStmts(list []*syntax.Stmt, f func(syntax.Node) bool) {
	for _, s := range list {
		walkTree(s, f)
	}
}

func walkWords(list []*syntax.Word, f func(syntax.Node) bool) {
	for _, w := range list {
		walkTree(w, f)
	}
}

func walkParts(list []syntax.WordPart, f func(syntax.Node) bool) {
	for _, p := range list {
		walkTree(p, f)
	}
}
