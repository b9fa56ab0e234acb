package shell

import "strings"

// The fast path reads the commonest lines an agent sends — commands of
// plain words (git status, ls -la src, go test ./... && go vet ./...),
// single-quoted arguments and find's {} (find . -name '*.pyc' -exec rm
// {} +) — without the parser: each argv is its command split on blanks. It applies only where
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

// maxFastCommands bounds the commands of a list the fast path reads.
const maxFastCommands = 16

// fast walks src when it is a list of simple commands — one, or several
// joined by &&, || or ; — each of a plain first word and plain,
// single-quoted or {} arguments (fastWord), and reports whether it did. src is the parser text of the top level (no CR, valid UTF-8, no
// NUL).
func (w *walker) fast(src string) bool {
	if w.opts.general || len(src) > maxFastBytes {
		return false
	}
	// textConsts reads `set -- …` as positional parameters: leave it to
	// the general walk rather than repeat that here.
	if strings.Contains(src, "set") && strings.Contains(src, "--") {
		return false
	}
	// First pass: check the shape and count the words of each command.
	var counts [maxFastCommands]int
	cmds, words, head := 0, 0, true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == ';' || c == '&' || c == '|':
			// An operator ends a command that has words and is followed
			// by another: "a && b", "a || b", "a; b". A single & (in the
			// background), a pipe, and an operator at either end or next
			// to another are the general walk's.
			n := 1
			if c != ';' {
				if i+1 >= len(src) || src[i+1] != c {
					return false
				}
				n = 2
			}
			if words == 0 || cmds+1 >= maxFastCommands {
				return false
			}
			counts[cmds] = words
			cmds, words, head = cmds+1, 0, true
			i += n
			continue
		}
		s := i
		end, kind := fastWord(src, i)
		if kind == notFast {
			return false
		}
		i = end
		if head {
			if w := src[s:i]; kind != plainWord || strings.IndexByte(w, '=') >= 0 || reservedFirst(w) {
				return false
			}
			head = false
		}
		words++
	}
	if words == 0 {
		return false // empty, or an operator at the end
	}
	counts[cmds] = words
	cmds++
	// Second pass: each command's argv, walked as walker.stmt and
	// walker.call walk a statement that is one call without
	// assignments, redirections or substitutions.
	i := 0
	for k := range cmds {
		args := w.argSlice(counts[k])
		start, end := -1, 0
		for len(args) < counts[k] {
			if fastSep(src[i]) {
				i++ // blanks, and the operator before this command
				continue
			}
			s := i
			e, kind := fastWord(src, i)
			i = e
			if start < 0 {
				start = s
			}
			// The arg walker.wordInto makes of the word.
			switch kind {
			case quotedWord:
				args = append(args, Arg{Value: src[s+1 : i-1], Static: true, Span: Span{Start: s, End: i}, off: int32(s + 2)})
			case bracesWord:
				args = append(args, Arg{Value: "{}", Static: true, Span: Span{Start: s, End: i}})
			default:
				args = append(args, Arg{Value: src[s:i], Static: true, Span: Span{Start: s, End: i}, off: int32(s + 1)})
			}
			end = i
		}
		w.nest++
		idx := w.exec(args, nil, nil, stdin{}, Span{Start: start, End: end})
		if idx >= 0 {
			w.a.Commands[idx].Redirs = nil
			w.redirectFindings(idx, nil)
			w.sentSubsts(idx)
		}
		w.nest--
		if w.err != nil {
			break
		}
	}
	return true
}

// Kinds of words the fast path reads.
const (
	notFast    = iota
	plainWord  // plain bytes: the word is its text
	quotedWord // '…' of printable ASCII, not empty: its content, verbatim
	bracesWord // {} (find -exec, xargs -I): braces that expand to nothing
)

// fastWord reads the word at src[i:] and returns where it ends and its
// kind: notFast when it is none of the fast path's (then the general
// walk reads the line). A word must end at a blank, an operator or the
// end of the line.
func fastWord(src string, i int) (int, int) {
	kind, j := plainWord, i
	switch {
	case src[i] == '\'':
		j = i + 1
		for j < len(src) && src[j] != '\'' {
			if src[j] < 0x20 || src[j] > 0x7e {
				return i, notFast
			}
			j++
		}
		if j >= len(src) || j == i+1 {
			return i, notFast // unterminated, or empty
		}
		kind, j = quotedWord, j+1
	case strings.HasPrefix(src[i:], "{}"):
		kind, j = bracesWord, i+2
	default:
		for j < len(src) && plainByte[src[j]] {
			j++
		}
		if j == i {
			return i, notFast
		}
	}
	if j < len(src) && !fastSep(src[j]) {
		return i, notFast // a byte that is not plain
	}
	return j, kind
}

// fastSep reports whether c may follow a word of the fast path.
func fastSep(c byte) bool {
	return c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|'
}
