package shell

import "strings"

// The fast path reads the commonest line an agent sends — one command of
// plain words (git status, ls -la src, go test ./...) — without the
// parser: its argv is the line split on blanks. It applies only where
// that reading is exactly what bash and the parser make of the line;
// everything else goes through the general walk. What it records is
// byte-for-byte what the general walk records (the differential test in
// fast_test.go runs both over every corpus case and a fuzz target over
// arbitrary input), so the rules, and every verdict, are the same.

// maxFastBytes bounds the lines the fast path reads: longer lines are
// rarely one plain command.
const maxFastBytes = 512

// plainByte marks the bytes a word of the fast path may hold: letters,
// digits and punctuation that is never special to bash in the middle or
// at the start of a word. Quotes, $, `, \, glob and brace characters,
// ~, #, !, ^, =, redirection and control operators, parentheses, and
// every control and non-ASCII byte take the general walk.
var plainByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-_./:@%+," {
		t[c] = true
	}
	return t
}()

// reservedFirst reports the first words the parser does not read as a
// simple command: reserved words, and the builtins it gives a node of
// their own.
func reservedFirst(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in",
		"function", "time", "coproc", "let", "declare", "local", "export", "readonly", "typeset", "nameref":
		return true
	}
	return false
}

// fast walks src as one simple command when it is one, and reports
// whether it did. src is the parser text of the top level (no CR, valid
// UTF-8, no NUL).
func (w *walker) fast(src string) bool {
	if w.opts.general || len(src) > maxFastBytes {
		return false
	}
	n, first, firstEnd := 0, -1, 0
	for i := 0; i < len(src); {
		c := src[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		s := i
		for i < len(src) && plainByte[src[i]] {
			i++
		}
		if i == s || i < len(src) && src[i] != ' ' && src[i] != '\t' {
			return false // a byte that is not plain
		}
		if n == 0 {
			first, firstEnd = s, i
		}
		n++
	}
	if n == 0 {
		return false
	}
	head := src[first:firstEnd]
	if strings.IndexByte(head, '=') >= 0 || reservedFirst(head) {
		return false
	}
	// textConsts reads `set -- …` as positional parameters: leave it to
	// the general walk rather than repeat that here.
	if strings.Contains(src, "set") && strings.Contains(src, "--") {
		return false
	}
	args := w.argSlice(n)
	end := 0
	for i := 0; i < len(src); {
		if c := src[i]; c == ' ' || c == '\t' {
			i++
			continue
		}
		s := i
		for i < len(src) && src[i] != ' ' && src[i] != '\t' {
			i++
		}
		args = append(args, Arg{Value: src[s:i], Static: true, Span: Span{Start: s, End: i}, off: int32(s + 1)})
		end = i
	}
	// What walker.stmt and walker.call do for a statement that is one
	// call without assignments, redirections or substitutions.
	w.nest++
	idx := w.exec(args, nil, nil, stdin{}, Span{Start: first, End: end})
	if idx >= 0 {
		w.a.Commands[idx].Redirs = nil
		w.redirectFindings(idx, nil)
		w.sentSubsts(idx)
	}
	w.nest--
	return true
}
