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
		walkList(n.Stmts, f)
	case *syntax.Comment:
	case *syntax.Stmt:
		walkOpt(n.Cmd, f)
		walkList(n.Redirs, f)
	case *syntax.Assign:
		walkOpt(n.Name, f)
		walkOpt(n.Value, f)
		walkOpt(n.Index, f)
		walkOpt(n.Array, f)
	case *syntax.Redirect:
		walkOpt(n.N, f)
		walkTree(n.Word, f)
		walkOpt(n.Hdoc, f)
	case *syntax.CallExpr:
		walkList(n.Assigns, f)
		walkList(n.Args, f)
	case *syntax.Subshell:
		walkList(n.Stmts, f)
	case *syntax.Block:
		walkList(n.Stmts, f)
	case *syntax.IfClause:
		walkList(n.Cond, f)
		walkList(n.Then, f)
		walkOpt(n.Else, f)
	case *syntax.WhileClause:
		walkList(n.Cond, f)
		walkList(n.Do, f)
	case *syntax.ForClause:
		walkTree(n.Loop, f)
		walkList(n.Do, f)
	case *syntax.WordIter:
		walkTree(n.Name, f)
		walkList(n.Items, f)
	case *syntax.CStyleLoop:
		walkOpt(n.Init, f)
		walkOpt(n.Cond, f)
		walkOpt(n.Post, f)
	case *syntax.BinaryCmd:
		walkTree(n.X, f)
		walkTree(n.Y, f)
	case *syntax.FuncDecl:
		walkOpt(n.Name, f)
		walkList(n.Names, f)
		walkTree(n.Body, f)
	case *syntax.Word:
		walkList(n.Parts, f)
	case *syntax.Lit:
	case *syntax.SglQuoted:
	case *syntax.DblQuoted:
		walkList(n.Parts, f)
	case *syntax.CmdSubst:
		walkList(n.Stmts, f)
	case *syntax.ParamExp:
		walkOpt(n.Flags, f)
		walkOpt(n.Param, f)
		walkOpt(n.NestedParam, f)
		walkOpt(n.Index, f)
		if n.Slice != nil {
			walkOpt(n.Slice.Offset, f)
			walkOpt(n.Slice.Length, f)
		}
		if n.Repl != nil {
			walkOpt(n.Repl.Orig, f)
			walkOpt(n.Repl.With, f)
		}
		if n.Exp != nil {
			walkOpt(n.Exp.Word, f)
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
		walkOpt(n.X, f)
	case *syntax.ParenTest:
		walkTree(n.X, f)
	case *syntax.CaseClause:
		walkTree(n.Word, f)
		walkList(n.Items, f)
	case *syntax.CaseItem:
		walkList(n.Patterns, f)
		walkList(n.Stmts, f)
	case *syntax.TestClause:
		walkTree(n.X, f)
	case *syntax.DeclClause:
		walkList(n.Args, f)
	case *syntax.ArrayExpr:
		walkList(n.Elems, f)
	case *syntax.ArrayElem:
		walkOpt(n.Index, f)
		walkOpt(n.Value, f)
	case *syntax.ExtGlob:
		walkTree(n.Pattern, f)
	case *syntax.ProcSubst:
		walkList(n.Stmts, f)
	case *syntax.TimeClause:
		walkOpt(n.Stmt, f)
	case *syntax.CoprocClause:
		walkOpt(n.Name, f)
		walkTree(n.Stmt, f)
	case *syntax.LetClause:
		walkList(n.Exprs, f)
	case *syntax.TestDecl:
		walkTree(n.Description, f)
		walkTree(n.Body, f)
	default:
		panic(fmt.Sprintf("syntax.Walk: unexpected node type %T", node))
	}
}

// walkOpt walks an optional child: one that may be nil. The children
// are typed pointers or interfaces, so the check is on N itself (a nil
// *syntax.Word is not a nil syntax.Node).
func walkOpt[N interface {
	comparable
	syntax.Node
}](n N, f func(syntax.Node) bool) {
	var none N
	if n != none {
		walkTree(n, f)
	}
}

// walkList walks a list of children in order.
func walkList[N syntax.Node](list []N, f func(syntax.Node) bool) {
	for _, n := range list {
		walkTree(n, f)
	}
}
