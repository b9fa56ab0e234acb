package codescan

import (
	"strings"
	"unicode"
)

// Perl, Ruby, PHP and PowerShell are read by a tokenizer, not a parser:
// it finds their spawn forms (system, exec, backticks, qx, %x,
// shell_exec, …) and the common file operations with literal
// arguments, and calls complete only code that does nothing but print
// literals. Everything else is incomplete, so it is never plainly safe.

type otok struct {
	k     byte // 'w' word, 's' string, 'c' command string, 'v' variable, 'n' number, 'p' punctuation
	text  string
	val   *value
	ident string // lower-case word
}

type otherLang struct {
	name     string
	comments []string // line comment starts
	block    [][2]string
	// spawns run their argument as a command line (or argv).
	spawns map[string]bool
	// prints are harmless when their arguments are literals.
	prints map[string]bool
	// harmless are words that may appear in complete code (keywords,
	// harmless functions).
	harmless map[string]bool
	// files translate file operations: word → command.
	files map[string]string
	evals map[string]bool
	// interp reports interpolation in double-quoted strings.
	interp func(s string) *value
}

var otherLangs = map[string]*otherLang{
	Perl: {name: "perl", comments: []string{"#"},
		spawns:   set("system", "exec", "readpipe"),
		prints:   set("print", "say", "printf", "warn", "die"),
		harmless: set("use", "strict", "warnings", "my", "local", "our", "exit", "length", "join", "uc", "lc", "sprintf", "chomp", "scalar", "reverse", "sort", "split"),
		files:    map[string]string{"unlink": "rm --", "rmdir": "rmdir --", "rename": "mv --", "mkdir": "mkdir --", "rmtree": "rm -rf --", "remove_tree": "rm -rf --", "chmod": "chmod", "symlink": "ln -s --", "link": "ln --", "copy": "cp --", "move": "mv --"},
		evals:    set("eval", "do", "require"),
		interp:   sigilInterp("$@"),
	},
	Ruby: {name: "ruby", comments: []string{"#"},
		spawns:   set("system", "exec", "spawn", "popen", "popen2", "popen3", "capture2", "capture2e", "capture3", "pipeline", "open3"),
		prints:   set("puts", "print", "p", "pp", "printf", "warn", "abort"),
		harmless: set("require", "exit", "end", "nil", "true", "false", "kernel", "stdout", "stderr", "json"),
		files:    map[string]string{"delete": "rm --", "unlink": "rm --", "rm": "rm --", "rm_f": "rm -f --", "rm_r": "rm -r --", "rm_rf": "rm -rf --", "remove_dir": "rm -r --", "remove_entry": "rm -r --", "rmdir": "rmdir --", "rename": "mv --", "mv": "mv --", "cp": "cp --", "cp_r": "cp -r --", "mkdir": "mkdir --", "mkdir_p": "mkdir -p --", "symlink": "ln -s --", "ln_s": "ln -s --", "chmod": "chmod", "write": ": >", "binwrite": ": >", "touch": "touch --"},
		evals:    set("eval", "instance_eval", "class_eval", "module_eval", "send", "public_send", "__send__", "const_get", "method", "define_method", "load", "binding"),
		interp:   rubyInterp,
	},
	PHP: {name: "php", comments: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}},
		spawns:   set("system", "exec", "shell_exec", "passthru", "popen", "proc_open", "pcntl_exec"),
		prints:   set("echo", "print", "printf", "print_r", "var_dump", "die", "exit"),
		harmless: set("php", "strlen", "strtoupper", "strtolower", "implode", "explode", "json_encode", "count", "true", "false", "null"),
		files:    map[string]string{"unlink": "rm --", "rmdir": "rmdir --", "rename": "mv --", "copy": "cp --", "mkdir": "mkdir -p --", "symlink": "ln -s --", "link": "ln --", "chmod": "chmod", "touch": "touch --", "file_put_contents": ": >"},
		evals:    set("eval", "assert", "create_function", "include", "include_once", "require", "require_once", "call_user_func", "call_user_func_array", "preg_replace", "array_map", "usort"),
		interp:   sigilInterp("$"),
	},
	PowerShell: {name: "powershell", comments: []string{"#"}, block: [][2]string{{"<#", "#>"}},
		prints:   set("write-output", "write-host", "echo", "write", "write-verbose", "write-information"),
		harmless: set("get-date", "get-location", "pwd", "get-host", "$psversiontable"),
		evals:    set("invoke-expression", "iex", "invoke-command", "icm", "start-job", "add-type", "scriptblock", "create", "invoke"),
		interp:   sigilInterp("$"),
	},
}

func analyzeOther(lang, src string) Result {
	s := &state{lang: lang}
	runOther(s, otherLangs[lang], src)
	return s.result()
}

func runOther(s *state, l *otherLang, src string) {
	if l.name == "php" {
		src = strings.TrimSpace(src)
		src = strings.TrimPrefix(src, "<?php")
		src = strings.TrimPrefix(src, "<?")
		src = strings.TrimSuffix(strings.TrimSpace(src), "?>")
	}
	if l.name == "powershell" {
		for _, st := range psStatements(src) {
			toks, err := l.tokenize(st)
			if err != nil {
				s.incomplete("powershell code that could not be read: %v", err)
				s.command(st)
				continue
			}
			if len(toks) > 0 {
				l.powershell(s, st, toks)
			}
		}
		return
	}
	toks, err := l.tokenize(src)
	if err != nil {
		s.incomplete("%s code that could not be read: %v", l.name, err)
		return
	}
	var stmt []otok
	flush := func() {
		if len(stmt) > 0 {
			l.statement(s, stmt)
		}
		stmt = stmt[:0]
	}
	for _, t := range toks {
		if t.k == 'p' && (t.text == ";" || t.text == "\n") {
			flush()
			continue
		}
		stmt = append(stmt, t)
	}
	flush()
}

// statement judges one statement.
func (l *otherLang) statement(s *state, toks []otok) {
	// Command strings run wherever they are.
	for _, t := range toks {
		if t.k == 'c' {
			s.command(s.line(t.val, l.name+" backticks"))
		}
	}
	head := toks[0]
	for i, t := range toks {
		if t.k != 'w' {
			continue
		}
		name := lastName(t.ident)
		switch {
		case l.evals[name] || l.evals[t.ident]:
			args := literalArgs(toks[i+1:])
			if len(args) == 1 {
				if lit, ok := args[0].known(); ok && name == "eval" {
					s.nested(func() { runOther(s, l, lit) })
					continue
				}
			}
			s.find(ClassEval, Dangerous, "evaluates code built at run time")
			s.incomplete("%s %s", l.name, t.ident)
		case l.spawns[name] && !(l.name == "ruby" && name == "p"):
			args := literalArgs(toks[i+1:])
			switch {
			case len(args) == 0:
				s.incomplete("%s %s with arguments not read", l.name, t.ident)
			case len(args) == 1 || l.name == "php": // PHP's spawns take one command line
				s.command(s.line(args[0], l.name+" "+t.ident))
			default:
				s.command(s.argv(args))
			}
			if !allLiteral(toks[i+1:]) {
				s.incomplete("%s %s with arguments computed at run time", l.name, t.ident)
			}
		case l.name == "perl" && name == "open" || l.name == "ruby" && (t.ident == "io.popen" || t.ident == "open"):
			args := literalArgs(toks[i+1:])
			if l.name == "perl" && len(args) > 0 {
				args = args[1:] // the file handle
			}
			l.open(s, args)
			if !allLiteral(toks[i+1:]) {
				s.incomplete("%s open with arguments computed at run time", l.name)
			}
		case l.files[name] != "" && (i == 0 || isCallPrefix(t.ident, l)):
			args := literalArgs(toks[i+1:])
			cmd := l.files[name]
			words := []string{cmd}
			if cmd == ": >" {
				if len(args) > 0 {
					s.command(": > " + s.word(args[0]))
				}
				break
			}
			for _, a := range args {
				words = append(words, s.word(a))
			}
			s.command(strings.Join(words, " "))
			if !allLiteral(toks[i+1:]) {
				s.incomplete("%s %s with arguments computed at run time", l.name, t.ident)
			}
		}
	}
	if l.name == "perl" && (head.ident == "use" || head.ident == "no") && len(toks) >= 2 && perlPragmas[toks[1].ident] {
		return
	}
	for _, t := range toks {
		if t.k == 'r' && t.ident == "s///e" {
			s.find(ClassEval, Dangerous, "evaluates code built at run time")
			s.incomplete("perl s///e evaluates its replacement as code")
			return
		}
	}
	if l.name == "perl" && perlPure(toks) {
		return // a filter over its input: print, patterns, substitutions (perl -ne, -pe)
	}
	// Complete only for printing literals.
	if head.k == 'w' && (l.prints[head.ident] || l.harmless[head.ident]) && allLiteral(toks[1:]) {
		return
	}
	s.incomplete("%s code beyond printing literals (%s)", l.name, describeTok(head))
}

// perlPragmas are modules whose use changes only how code is read.
var perlPragmas = set("strict", "warnings", "utf8", "feature", "integer", "vars", "constant", "diagnostics")

func isCallPrefix(ident string, l *otherLang) bool {
	switch l.name {
	case "ruby":
		return strings.HasPrefix(ident, "file.") || strings.HasPrefix(ident, "fileutils.") || strings.HasPrefix(ident, "dir.")
	case "perl":
		return strings.HasPrefix(ident, "file::")
	}
	return true
}

func describeTok(t otok) string {
	if t.k == 'w' {
		return t.text
	}
	return "a statement starting with " + quoteShort(t.text)
}

func lastName(ident string) string {
	if i := strings.LastIndexAny(ident, ".:>"); i >= 0 {
		return ident[i+1:]
	}
	return ident
}

// open handles perl's open(FH, "cmd |"), open(FH, "-|", cmd…) and
// open(FH, ">", path), and ruby's IO.popen / open("|cmd").
func (l *otherLang) open(s *state, args []*value) {
	var strs []*value
	for _, a := range args {
		if a.k == kStr {
			strs = append(strs, a)
		}
	}
	if len(strs) == 0 {
		return
	}
	first, ok := strs[0].known()
	if !ok {
		s.incomplete("%s open of a name computed at run time", l.name)
		return
	}
	mode := strings.TrimSpace(first)
	switch {
	case mode == "-|" || mode == "|-":
		s.command(s.argv(strs[1:]))
	case strings.HasSuffix(mode, "|"):
		s.command(strings.TrimSpace(strings.TrimSuffix(mode, "|")))
	case strings.HasPrefix(mode, "|"):
		s.command(strings.TrimSpace(strings.TrimPrefix(mode, "|")))
	case mode == ">" || mode == ">>" || mode == "+<" || mode == "+>":
		if len(strs) > 1 {
			writeTo(s, strs[1], mode == ">>")
		}
	case strings.HasPrefix(mode, ">>"):
		writeTo(s, str(strings.TrimSpace(mode[2:])), true)
	case strings.HasPrefix(mode, ">"):
		writeTo(s, str(strings.TrimSpace(mode[1:])), false)
	case l.name == "ruby" && len(strs) > 1:
		if m, _ := strs[1].known(); strings.ContainsAny(m, "wa+") {
			writeTo(s, strs[0], strings.Contains(m, "a"))
		} else {
			readFrom(s, strs[0])
		}
	default:
		readFrom(s, str(strings.TrimPrefix(mode, "<")))
	}
}

// powershell: every statement is a command line for the shell analyser
// (its Windows rules know the cmdlets); complete only for printing
// literals and a few read-only cmdlets.
func (l *otherLang) powershell(s *state, src string, toks []otok) {
	for _, t := range toks {
		if t.k == 'c' {
			s.command(s.line(t.val, "powershell"))
		}
	}
	head := toks[0]
	for _, t := range toks {
		if t.k == 'w' && l.evals[t.ident] {
			s.find(ClassEval, Dangerous, "evaluates code built at run time")
			s.incomplete("powershell %s", t.text)
		}
		if t.k == 'w' && (strings.HasPrefix(t.ident, "-enc") || strings.HasPrefix(t.ident, "[system.convert]::frombase64")) {
			s.incomplete("powershell encoded payload")
		}
	}
	if head.k == 'w' && (l.prints[head.ident] || l.harmless[head.ident]) && allLiteral(toks[1:]) {
		return
	}
	s.command(strings.TrimSpace(src))
	s.incomplete("powershell code beyond printing literals (%s)", describeTok(head))
}

// psStatements splits PowerShell source into statements at newlines
// and semicolons outside quotes and brackets, comments removed.
func psStatements(src string) []string {
	var out []string
	var b strings.Builder
	depth := 0
	var q byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case q != 0:
			b.WriteByte(c)
			if c == '`' && i+1 < len(src) {
				i++
				b.WriteByte(src[i])
			} else if c == q {
				q = 0
			}
			continue
		case c == '\'' || c == '"':
			q = c
		case strings.HasPrefix(src[i:], "<#"):
			end := strings.Index(src[i:], "#>")
			if end < 0 {
				i = len(src)
			} else {
				i += end + 1
			}
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ')' || c == '}' || c == ']':
			depth--
		case (c == '\n' || c == ';') && depth <= 0:
			if t := strings.TrimSpace(b.String()); t != "" {
				out = append(out, t)
			}
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	if t := strings.TrimSpace(b.String()); t != "" {
		out = append(out, t)
	}
	return out
}

// literalArgs reads the arguments of a call: strings and numbers, in
// order, with anything else as a run-time value. It stops at a closing
// bracket at depth 0 or a statement-level keyword.
func literalArgs(toks []otok) []*value {
	var out []*value
	depth := 0
	var cur []*value // pieces joined by . or +
	push := func() {
		if len(cur) > 0 {
			out = append(out, concat(cur...))
			cur = nil
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.k {
		case 's':
			cur = append(cur, t.val)
		case 'n':
			cur = append(cur, str(t.text))
		case 'v', 'c':
			cur = append(cur, dynStr())
		case 'w':
			switch t.ident {
			case "or", "and", "if", "unless", "do", "then":
				push()
				return out
			}
			if len(cur) == 0 && (depth > 0 || i > 0) {
				cur = append(cur, dynStr())
			}
		case 'p':
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
				if depth < 0 {
					push()
					return out
				}
			case ",", "=>":
				push()
			case ".", "+", "<<":
			default:
				if len(cur) > 0 {
					cur = append(cur, dynStr())
				}
			}
		}
	}
	push()
	return out
}

// allLiteral reports arguments made only of literals and punctuation.
func allLiteral(toks []otok) bool {
	for _, t := range toks {
		switch t.k {
		case 's':
			if _, ok := t.val.known(); !ok {
				return false
			}
		case 'n':
		case 'p':
			switch t.text {
			case "(", ")", ",", ".", "+", "[", "]":
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// tokenize splits source into tokens, newlines kept as statement ends
// outside brackets.
func (l *otherLang) tokenize(src string) ([]otok, error) {
	var out []otok
	depth := 0
	i := 0
	for i < len(src) {
		c := src[i]
		if blk := l.blockAt(src[i:]); blk[0] != "" {
			end := strings.Index(src[i+len(blk[0]):], blk[1])
			if end < 0 {
				return nil, errString("unterminated comment")
			}
			i += len(blk[0]) + end + len(blk[1])
			continue
		}
		if l.commentAt(src[i:]) {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		switch {
		case c == '\n':
			if depth == 0 {
				out = append(out, otok{k: 'p', text: "\n"})
			}
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\'' || c == '"' || c == '`':
			body, n, ok := quoted(src[i:], c)
			if !ok {
				return nil, errString("unterminated string")
			}
			i += n
			switch c {
			case '\'':
				out = append(out, otok{k: 's', text: src[i-n : i], val: str(unescapeSingle(body))})
			case '"':
				out = append(out, otok{k: 's', text: src[i-n : i], val: l.interp(body)})
			default:
				if l.name == "powershell" { // the escape character
					out = append(out, otok{k: 'p', text: "`"})
					i -= n - 1
					continue
				}
				out = append(out, otok{k: 'c', text: src[i-n : i], val: l.interp(body)})
			}
		case l.name == "perl" && perlRegexAt(src, i, out):
			// m//, s///, tr///, y/// and a bare /…/ where a term is
			// expected: a pattern, harmless unless s///e evaluates its
			// replacement as code.
			t, n, err := perlRegex(src[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			i += n
		case (l.name == "perl" || l.name == "ruby") && quoteOp(src[i:], l.name) != "":
			op := quoteOp(src[i:], l.name)
			j := i + len(op)
			open := src[j]
			closeCh := map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}[open]
			if closeCh == 0 {
				closeCh = open
			}
			end := matchDelim(src[j+1:], open, closeCh)
			if end < 0 {
				return nil, errString("unterminated quote-like operator")
			}
			body := src[j+1 : j+1+end]
			i = j + 1 + end + 1
			switch op {
			case "qx", "%x":
				out = append(out, otok{k: 'c', text: op, val: l.interp(body)})
			case "q", "%q", "%w", "qw", "%i":
				out = append(out, otok{k: 's', text: op, val: str(body)})
			default:
				out = append(out, otok{k: 's', text: op, val: l.interp(body)})
			}
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.') {
				j++
			}
			out = append(out, otok{k: 'n', text: src[i:j]})
			i = j
		case c == '$' || c == '@' || c == '%' && l.name == "perl" && i+1 < len(src) && isWordByte(src[i+1]):
			j := i + 1
			for j < len(src) && (isWordByte(src[j]) || src[j] == ':' || src[j] == '{' && j == i+1) {
				j++
			}
			if j == i+1 {
				j++
			}
			out = append(out, otok{k: 'v', text: src[i:min(j, len(src))]})
			i = min(j, len(src))
		case isWordByte(c) || c >= 0x80:
			j := i
			for j < len(src) {
				if isWordByte(src[j]) || src[j] >= 0x80 || src[j] == '-' && l.name == "powershell" {
					j++
					continue
				}
				// Qualified names: File.delete, FileUtils::rm_rf, $x->m.
				if (src[j] == '.' || src[j] == ':' && j+1 < len(src) && src[j+1] == ':') && j+1 < len(src) && (isWordByte(src[j+1]) || src[j+1] == ':') && l.name != "php" {
					j++
					continue
				}
				break
			}
			w := src[i:j]
			out = append(out, otok{k: 'w', text: w, ident: strings.ToLower(w)})
			i = j
		default:
			if strings.ContainsRune("([{", rune(c)) {
				depth++
			}
			if strings.ContainsRune(")]}", rune(c)) && depth > 0 {
				depth--
			}
			if c == '=' && i+1 < len(src) && src[i+1] == '>' {
				out = append(out, otok{k: 'p', text: "=>"})
				i += 2
				continue
			}
			if c == '-' && i+1 < len(src) && src[i+1] == '>' {
				// $obj->method: join into the previous word.
				i += 2
				continue
			}
			out = append(out, otok{k: 'p', text: string(c)})
			i++
		}
	}
	return out, nil
}

type errString string

func (e errString) Error() string { return string(e) }

func (l *otherLang) commentAt(s string) bool {
	for _, c := range l.comments {
		if strings.HasPrefix(s, c) {
			if c == "#" && l.name == "powershell" && strings.HasPrefix(s, "#>") {
				return false
			}
			return true
		}
	}
	return false
}

func (l *otherLang) blockAt(s string) [2]string {
	for _, b := range l.block {
		if strings.HasPrefix(s, b[0]) {
			return b
		}
	}
	return [2]string{}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// quoteOp returns perl's q qq qw qx or ruby's %q %Q %w %x at s, if any.
func quoteOp(s, lang string) string {
	ops := []string{"qq", "qw", "qx", "q"}
	if lang == "ruby" {
		ops = []string{"%x", "%q", "%Q", "%w", "%i", "%"}
	}
	for _, op := range ops {
		if !strings.HasPrefix(s, op) || len(s) <= len(op) {
			continue
		}
		d := s[len(op)]
		if lang == "perl" && (isWordByte(d) || d == ' ' || d == '=' || d == ',' || d == ';' || d == ')') {
			continue
		}
		if lang == "ruby" && op == "%" && !strings.ContainsRune("({[<|!/", rune(d)) {
			continue
		}
		if unicode.IsSpace(rune(d)) {
			continue
		}
		return op
	}
	return ""
}

func matchDelim(s string, open, close byte) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case close:
			if depth == 0 {
				return i
			}
			depth--
		case open:
			if open != close {
				depth++
			}
		}
	}
	return -1
}

// quoted reads a quoted string at s (s[0] is the quote); it returns the
// body and the bytes used.
func quoted(s string, q byte) (string, int, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return s[1:i], i + 1, true
		}
	}
	return "", 0, false
}

func unescapeSingle(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\'`, `'`).Replace(s)
}

// sigilInterp reads a double-quoted string where sigils interpolate:
// a variable is a run-time part; escapes are decoded as in C.
func sigilInterp(sigils string) func(string) *value {
	return func(body string) *value {
		return interpolated(body, "xu0ecN", func(body string, i int) (int, bool, bool) {
			if strings.IndexByte(sigils, body[i]) < 0 || i+1 >= len(body) || !isWordByte(body[i+1]) && body[i+1] != '{' && body[i+1] != '(' {
				return 0, false, false
			}
			j := i + 1
			for j < len(body) && (isWordByte(body[j]) || strings.IndexByte("{}()[]->:", body[j]) >= 0) {
				j++
			}
			return j - 1, true, false
		})
	}
}

func rubyInterp(body string) *value {
	if !strings.Contains(body, "#{") && !strings.Contains(body, `\`) {
		return str(body)
	}
	return interpolated(body, "xu0e", func(body string, i int) (int, bool, bool) {
		if body[i] != '#' || i+1 >= len(body) || body[i+1] != '{' {
			return 0, false, false
		}
		end := matchDelim(body[i+2:], '{', '}')
		if end < 0 {
			return 0, false, true
		}
		return i + 2 + end, true, false
	})
}

// interpolated reads the body of a double-quoted string that
// interpolates. \n and \t are decoded; an escaped letter of encoded
// (\x41, \u…) is a run-time part, not decoded here; any other escaped
// byte stands for itself. hole reports an interpolation at body[i] and
// the index of its last byte (a run-time part), or that it never ends
// (broken: the whole string is a run-time value).
func interpolated(body, encoded string, hole func(body string, i int) (last int, ok, broken bool)) *value {
	var parts []*value
	var lit strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			i++
			switch e := body[i]; {
			case e == 'n':
				lit.WriteByte('\n')
			case e == 't':
				lit.WriteByte('\t')
			case strings.IndexByte(encoded, e) >= 0:
				parts = append(parts, str(lit.String()), dynStr())
				lit.Reset()
			default:
				lit.WriteByte(e)
			}
			continue
		}
		last, ok, broken := hole(body, i)
		switch {
		case broken:
			return dynStr()
		case ok:
			parts = append(parts, str(lit.String()), dynStr())
			lit.Reset()
			i = last
		default:
			lit.WriteByte(c)
		}
	}
	parts = append(parts, str(lit.String()))
	return concat(parts...)
}

// perlRegexAt reports a Perl pattern operator at src[i]: m, s, tr or y
// followed by a delimiter, or a bare / where a term is expected (after
// an operator, an opening bracket, a comma, =~ or a keyword), not a
// division.
func perlRegexAt(src string, i int, out []otok) bool {
	if i > 0 && (isWordByte(src[i-1]) || src[i-1] == '$' || src[i-1] == '@' || src[i-1] == '%' || src[i-1] == '&' || src[i-1] == '>' || src[i-1] == '-') {
		return false
	}
	rest := src[i:]
	for _, op := range []string{"tr", "s", "m", "y"} {
		if strings.HasPrefix(rest, op) && len(rest) > len(op) {
			d := rest[len(op)]
			if !isWordByte(d) && !unicode.IsSpace(rune(d)) && d != '=' && d != ',' && d != ';' && d != ')' && d != '>' {
				return true
			}
		}
	}
	if rest[0] != '/' {
		return false
	}
	if len(out) == 0 {
		return true
	}
	prev := out[len(out)-1]
	switch prev.k {
	case 'p':
		return prev.text != ")" && prev.text != "]" && prev.text != "}"
	case 'w':
		return perlTermWords[prev.ident]
	}
	return false
}

// perlTermWords are keywords after which a / starts a pattern.
var perlTermWords = set("if", "unless", "and", "or", "not", "while", "until", "split", "grep", "return", "when", "print", "say", "push", "unshift", "join")

// perlRegex reads one pattern operator: its token, and its length.
func perlRegex(src string) (otok, int, error) {
	op := ""
	for _, o := range []string{"tr", "s", "m", "y"} {
		if strings.HasPrefix(src, o) && len(src) > len(o) && !isWordByte(src[len(o)]) {
			op = o
			break
		}
	}
	j := len(op)
	open := src[j]
	closeCh := map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}[open]
	bodies := 1
	if op == "s" || op == "tr" || op == "y" {
		bodies = 2
	}
	for b := 0; b < bodies; b++ {
		if b == 1 && closeCh != 0 {
			// s{…}{…}: the second part has its own brackets.
			for j < len(src) && unicode.IsSpace(rune(src[j])) {
				j++
			}
			if j >= len(src) {
				return otok{}, 0, errString("unterminated substitution")
			}
			open = src[j]
			closeCh = map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}[open]
		}
		c := closeCh
		if c == 0 {
			c = open
		}
		if b == 1 && closeCh == 0 {
			// s/a/b/: the delimiter that closed the first part opens the
			// second.
			j--
		}
		end := matchDelim(src[j+1:], open, c)
		if end < 0 {
			return otok{}, 0, errString("unterminated pattern")
		}
		j += 1 + end + 1
	}
	k := j
	for k < len(src) && src[k] >= 'a' && src[k] <= 'z' {
		k++
	}
	t := otok{k: 'r', text: src[:k], ident: "regex"}
	if op == "s" && strings.Contains(src[j:k], "e") {
		t.ident = "s///e"
	}
	return t, k, nil
}

// perlPureWords are Perl words that compute and print without touching
// anything else.
var perlPureWords = set("print", "say", "printf", "if", "unless", "and", "or", "not", "xor", "eq", "ne", "lt", "gt", "le", "ge", "cmp",
	"x", "my", "our", "local", "next", "last", "redo", "while", "until", "for", "foreach", "else", "elsif", "defined", "undef",
	"length", "substr", "index", "rindex", "lc", "uc", "lcfirst", "ucfirst", "join", "split", "sprintf", "chomp", "chop", "chr", "ord",
	"sort", "reverse", "keys", "values", "each", "exists", "delete", "push", "pop", "shift", "unshift", "splice", "scalar", "abs",
	"int", "sqrt", "hex", "oct", "map", "grep", "wantarray", "sum", "max", "min", "begin", "end", "last", "uc", "quotemeta", "pos",
	"local", "stdout", "stderr", "stdin", "argv", "eof")

// perlPure reports a statement made of pure words, variables, literals,
// patterns and punctuation (no command strings, calls of unknown
// functions, file handles opened or code evaluated).
func perlPure(toks []otok) bool {
	for _, t := range toks {
		switch t.k {
		case 'w':
			if !perlPureWords[t.ident] {
				return false
			}
		case 'v', 'n', 'p', 'r':
		case 's':
		default:
			return false
		}
	}
	return true
}
