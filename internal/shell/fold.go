package shell

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Static text through a pipe: what `echo X | base64 -d | sh` or
// eval "$(printf … | base64 -d)" runs can be read when every stage is
// known — a static echo or printf, then decoders whose result is
// computed here (base64, base32, xxd -r -p, rev). Obfuscation that can be
// read is read; what cannot stays remote.decode_exec, opaque.

// maxFolded bounds the text a fold produces.
const maxFolded = 64 << 10

// transform computes what a decoder prints for in, given its argv.
func transform(name string, argv []string, in string) (string, bool) {
	has := func(fs ...string) bool { return hasFlag(argv[1:], fs...) }
	for _, w := range argv[1:] {
		if !strings.HasPrefix(w, "-") {
			return "", false // reads a file, not the pipe
		}
	}
	switch name {
	case "base64":
		if !has("-d", "--decode", "-D") {
			return "", false
		}
		s := strings.Map(func(r rune) rune {
			if r == '\n' || r == ' ' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, in)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				return string(b), true
			}
		}
	case "base32":
		if !has("-d", "--decode") {
			return "", false
		}
		s := strings.Join(strings.Fields(in), "")
		if b, err := base32.StdEncoding.DecodeString(s); err == nil {
			return string(b), true
		}
	case "xxd":
		if !has("-r") || !has("-p", "-ps", "-plain", "-postscript") {
			return "", false
		}
		if b, err := hex.DecodeString(strings.Join(strings.Fields(in), "")); err == nil {
			return string(b), true
		}
	case "rev":
		lines := strings.SplitAfter(in, "\n")
		var b strings.Builder
		for _, l := range lines {
			body := strings.TrimSuffix(l, "\n")
			r := []rune(body)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			b.WriteString(string(r))
			if len(body) < len(l) {
				b.WriteByte('\n')
			}
		}
		return b.String(), true
	case "cat":
		if len(argv) == 1 {
			return in, true
		}
	}
	return "", false
}

// pipeText returns what stage k of a pipeline (candidates from
// starts[k] to starts[k+1]) prints, when it is known.
func (w *walker) pipeText(starts []int, k int) (string, bool) {
	if starts[k+1]-starts[k] != 1 {
		return "", false
	}
	c := starts[k]
	if w.meta[c].hasOut {
		return w.meta[c].output, true
	}
	if k == 0 {
		return "", false
	}
	in, ok := w.pipeText(starts, k-1)
	if !ok {
		return "", false
	}
	cm := &w.a.Commands[c]
	for _, a := range cm.Argv {
		if !a.Static {
			return "", false
		}
	}
	out, ok := transform(cm.key(), cm.Words(), in)
	if !ok || len(out) > maxFolded {
		return "", false
	}
	return out, true
}

// foldStmts returns what a list of commands prints when it can be known
// without running anything: one static echo or printf, a decoder (or
// cat) reading a static here-string or here-document, or a pipeline of
// such stages ($(echo … | base64 -d), <(base64 -d <<< …)).
func (w *walker) foldStmts(list []*syntax.Stmt) (string, bool) {
	if len(list) != 1 {
		return "", false
	}
	st := list[0]
	if st.Background || st.Negated || st.Coprocess {
		return "", false
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.Pipe && len(st.Redirs) == 0 {
		return w.foldPipe(b)
	}
	return w.foldCall(st, "", false)
}

// lookedUp matches a look-up of a program on PATH (which NAME, command
// -v NAME, type -P NAME) and returns the name.
func lookedUp(name string, argv []string) (string, bool) {
	var prog string
	switch {
	case name == "which" && len(argv) == 2:
		prog = argv[1]
	case name == "command" && len(argv) == 3 && argv[1] == "-v",
		name == "type" && len(argv) == 3 && (argv[1] == "-P" || argv[1] == "-p"):
		prog = argv[2]
	default:
		return "", false
	}
	if prog == "" || strings.ContainsAny(prog, "/ \t\n") || strings.HasPrefix(prog, "-") {
		return "", false
	}
	return prog, true
}

// foldCall returns what one simple command prints, given what it reads
// on stdin (in, when piped is set), when that can be known.
func (w *walker) foldCall(st *syntax.Stmt, in string, piped bool) (string, bool) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 {
		return "", false
	}
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.WordHdoc:
			v, ok := staticWord(r.Word)
			if !ok {
				return "", false
			}
			in, piped = uncr(v, w.lvl.cr)+"\n", true
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil || hasDynamicParts(r.Hdoc) {
				return "", false
			}
			in, piped = w.hdocText(r.Hdoc), true
		default:
			return "", false
		}
	}
	argv := make([]string, 0, len(ce.Args))
	args := make([]Arg, 0, len(ce.Args))
	for _, word := range ce.Args {
		// A word's leading tilde, $HOME and the XDG directories are
		// known (echo ~/.ssh/id_rsa prints the home's key's path).
		v, ok := assignedWord(word)
		if !ok {
			if v, ok = w.expandVars(w.text(word.Pos(), word.End())); !ok || strings.ContainsAny(v, "$`\"'") {
				return "", false
			}
		}
		v = uncr(v, w.lvl.cr)
		argv = append(argv, v)
		args = append(args, Arg{Value: v, Static: true})
	}
	name := cmdName(argv[0])
	if name == "echo" || name == "printf" {
		return echoOutput(name, args)
	}
	if prog, ok := lookedUp(name, argv); ok {
		// which NAME prints where NAME is on PATH: some bin directory.
		// The place stands in for all of them; what is judged of it —
		// a program of warden's replaced, a system directory written —
		// depends on the name and on its being in a bin directory.
		return "/usr/local/bin/" + prog + "\n", true
	}
	if !piped {
		return "", false
	}
	out, ok := transform(name, argv, in)
	if !ok || len(out) > maxFolded {
		return "", false
	}
	return out, true
}

// foldPipe returns the output of a pipeline of static stages
// ($(echo … | base64 -d)), without the walker's candidates.
func (w *walker) foldPipe(b *syntax.BinaryCmd) (string, bool) {
	stages := flattenPipe(flattenPipe(nil, b.X), b.Y)
	text, piped := "", false
	for _, st := range stages {
		if st.Background || st.Negated {
			return "", false
		}
		out, ok := w.foldCall(st, text, piped)
		if !ok {
			return "", false
		}
		text, piped = out, true
	}
	return text, true
}
