package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// Family writes: every way of writing a file hands its resolved targets
// to the one protected-path table (protected.go): redirections, tee, cp,
// mv, install, ln, touch, truncate, sed -i and sed's w command, dd of=
// (disk.go), curl -o and wget -O (network.go), tar -C and unzip -d
// (archives.go), awk's print > "f" (interp.go), find -fprint (delete.go),
// git clone DIR (git.go).

var _ = family(func() {
	register("writes", ruleTee, "tee")
	register("writes", ruleCopy, "cp", "mv", "install", "ln", "link", "gcp", "gmv")
	register("writes", ruleTouch, "touch", "truncate", "mkdir", "mkfifo", "mknod")
	register("writes", ruleSed, "sed", "gsed")
	register("writes", ruleEcho, "echo", "printf")
	register("writes", ruleCat, "cat")
})

var teeSpec = spec("", "a|append", "i|ignore-interrupts", "p", "output-error?", "help", "version")

func ruleTee(c *cmd) {
	p := c.parse(teeSpec)
	c.writes(p.operands)
	for _, op := range p.operands {
		c.w.wrote(op, "", false)
	}
}

var copySpecs = map[string]*optSpec{
	"cp": spec("", "a|archive", "attributes-only", "backup?", "b", "copy-contents", "d", "debug", "f|force", "i|interactive", "H", "l|link",
		"L|dereference", "n|no-clobber", "P|no-dereference", "p", "preserve?", "no-preserve=", "parents", "R|r|recursive", "reflink?",
		"remove-destination", "sparse=", "strip-trailing-slashes", "s|symbolic-link", "S|suffix=", "t|target-directory=",
		"T|no-target-directory", "u|update?", "v|verbose", "keep-directory-symlink", "x|one-file-system", "Z", "context?", "help", "version"),
	"mv": spec("", "backup?", "b", "debug", "exchange", "f|force", "i|interactive", "n|no-clobber", "no-copy", "strip-trailing-slashes",
		"S|suffix=", "t|target-directory=", "T|no-target-directory", "u|update?", "v|verbose", "Z|context", "help", "version"),
	"install": spec("", "backup?", "b", "c", "C|compare", "d|directory", "D", "g|group=", "m|mode=", "o|owner=", "p|preserve-timestamps",
		"s|strip", "strip-program=", "S|suffix=", "t|target-directory=", "T|no-target-directory", "v|verbose", "preserve-context", "Z",
		"context?", "debug", "help", "version"),
	"ln": spec("", "backup?", "b", "d|F|directory", "f|force", "i|interactive", "L|logical", "n|no-dereference", "P|physical", "r|relative",
		"s|symbolic", "S|suffix=", "t|target-directory=", "T|no-target-directory", "v|verbose", "help", "version"),
	"link": spec("", "help", "version"),
}

// ruleCopy: the destination is written, under its own name or, when it is
// a directory, under each source's name; mv also removes its sources;
// ln makes a second name for its targets, through which they can be
// written. Recursive copies read (and moves take) whole trees.
func ruleCopy(c *cmd) {
	name := c.name
	switch name {
	case "gcp":
		name = "cp"
	case "gmv":
		name = "mv"
	}
	p := c.parse(copySpecs[name])
	if p.has("help", "version") {
		return
	}
	ops := p.operands
	var dst Arg
	var srcs []Arg
	if t, ok := p.value("t"); ok {
		dst, srcs = t, ops
	} else if len(ops) >= 2 || name == "install" && p.has("d") && len(ops) == 1 {
		dst, srcs = ops[len(ops)-1], ops[:len(ops)-1]
		if name == "install" && p.has("d") {
			c.writes(ops)
			return
		}
	} else if name == "ln" && len(ops) == 1 {
		// ln TARGET: a link named after the target, here.
		srcs = ops
		dst = Arg{Value: ".", Static: true, Span: ops[0].Span}
	} else {
		return
	}
	c.writes([]Arg{dst})
	if p.has("T") && p.has("r", "a") {
		// cp -rT SRC DIR copies SRC's contents into DIR itself.
		c.tree([]Arg{dst}, accWrite)
	}
	if !p.has("T") && intoDir(dst, len(srcs), p.has("t")) {
		for _, s := range srcs {
			if !s.Static || s.Glob {
				continue
			}
			into := dst
			into.Value = strings.TrimSuffix(dst.Value, "/") + "/" + path.Base(s.Value)
			if cls, tier, d := c.w.argClass(into, accWrite); cls != "" {
				c.w.findTier(c.idx, cls, tier, dst.Span, d)
			}
		}
	}
	switch name {
	case "mv":
		c.writes(srcs)
		c.tree(srcs, accWrite)
		for _, s := range srcs {
			if r, ok := c.w.resolvePath(s); ok {
				if cls := c.w.deleteTarget(r, s.Glob); cls != "" {
					c.findDetail(cls, s.Span, r)
				}
			}
		}
	case "ln", "link":
		// Writing through the new name writes the target: a protected
		// one is a floor.
		for _, s := range srcs {
			if cls, tier, d := c.w.argClass(s, accWrite); tier == TierFloor || tier == TierHardline {
				c.w.findTier(c.idx, cls, tier, s.Span, d)
			}
		}
	case "cp", "install":
		if p.has("r", "a") {
			c.tree(srcs, accRead)
		}
	}
	for _, s := range srcs {
		c.w.copied(s, dst)
	}
	if secret := c.w.meta[c.idx].secret; secret != "" && dst.Static {
		// The copy holds the secret now (cp ~/.ssh/id_rsa /tmp/k).
		what := strings.TrimSuffix(secret, " ")
		c.w.taint(c.w.pathKey(dst.Value), what)
		for _, s := range srcs {
			c.w.taint(c.w.pathKey(strings.TrimSuffix(dst.Value, "/")+"/"+path.Base(s.Value)), what)
		}
	}
}

// intoDir reports whether a copy's destination is (probably) a
// directory the sources land in under their own names: it says so (a
// trailing slash, ".", "~", -t, several sources), or its name has no
// extension. A name like x.bak is taken to be the new file.
func intoDir(dst Arg, nsrc int, t bool) bool {
	v := dst.Value
	switch {
	case t || nsrc > 1 || strings.HasSuffix(v, "/") || v == "." || v == ".." || v == "~" || strings.HasSuffix(v, "/.") || strings.HasSuffix(v, "/.."):
		return true
	case !dst.Static:
		return true
	case strings.HasPrefix(path.Clean(v), "/dev/") || strings.Contains(v, "/dev/"):
		return false
	}
	return !strings.Contains(path.Base(v), ".")
}

var touchSpecs = map[string]*optSpec{
	"touch":    spec("", "a", "B|date=", "c|no-create", "d=", "f", "h|no-dereference", "m", "r|reference=", "t=", "time=", "help", "version"),
	"truncate": spec("", "c|no-create", "o|io-blocks", "r|reference=", "s|size=", "help", "version"),
	"mkdir":    spec("", "m|mode=", "p|parents", "v|verbose", "Z", "context?", "help", "version"),
	"mkfifo":   spec("", "m|mode=", "Z", "context?", "help", "version"),
	"mknod":    spec("", "m|mode=", "Z", "context?", "help", "version"),
}

func ruleTouch(c *cmd) {
	p := c.parse(touchSpecs[c.name])
	ops := p.operands
	if c.name == "mknod" && len(ops) > 1 {
		ops = ops[:1]
	}
	c.writes(ops)
}

var sedSpec = spec("", "n|quiet|silent", "debug", "e|expression=", "f|file=", "follow-symlinks", "i|in-place?", "l|line-length=",
	"posix", "E|r|regexp-extended", "s|separate", "sandbox", "u|unbuffered", "z|null-data", "help", "version", "b|binary")

// ruleSed: -i writes the files; the script may write (w FILE), read
// (r FILE) and run commands (e, s///e).
func ruleSed(c *cmd) {
	p := c.parse(sedSpec)
	scripts := p.values("e")
	files := p.operands
	if len(scripts) == 0 && !p.has("f") && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	if p.has("i") {
		c.writes(files)
	}
	if p.has("sandbox") {
		return
	}
	for _, s := range scripts {
		c.sedScript(s)
	}
}

// sedScript reads a sed program for the commands that reach outside: w
// and W write a file, r and R read one, e runs a command, and the s
// command's e flag runs the pattern space, its w flag writes a file.
func (c *cmd) sedScript(a Arg) {
	if !a.Static {
		c.inlineCode("sed", a, "sed")
		return
	}
	s := a.Value
	for i := 0; i < len(s); {
		// Skip blanks, separators and addresses.
		for i < len(s) && strings.IndexByte(" \t\n;{}!", s[i]) >= 0 {
			i++
		}
		i = skipSedAddress(s, i)
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return
		}
		cmdc := s[i]
		i++
		switch cmdc {
		case 'w', 'W', 'r', 'R', 'e':
			arg, next := sedLine(s, i)
			i = next
			arg = strings.TrimSpace(arg)
			switch cmdc {
			case 'w', 'W':
				if arg != "/dev/stdout" && arg != "/dev/stderr" {
					c.writes([]Arg{{Value: arg, Static: true, Span: a.Span}})
				}
			case 'r', 'R':
				c.reads([]Arg{{Value: arg, Static: true, Span: a.Span}})
			case 'e':
				if arg == "" {
					c.opaqueDetail(a.Span, "sed e runs the pattern space as a command")
				} else {
					c.code(Arg{Value: arg, Static: true, Span: a.Span}, "sed e")
				}
			}
		case 's', 'y':
			if i >= len(s) {
				return
			}
			delim := s[i]
			i++
			for part := 0; part < 2 && i < len(s); part++ {
				for i < len(s) && s[i] != delim {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				i++
			}
			if cmdc == 'y' {
				continue
			}
			// Flags: g p i I m M e NUMBER w FILE.
			for i < len(s) && strings.IndexByte("gpiImMe0123456789", s[i]) >= 0 {
				if s[i] == 'e' {
					c.opaqueDetail(a.Span, "sed s///e runs the result as a command")
				}
				i++
			}
			if i < len(s) && s[i] == 'w' {
				arg, next := sedLine(s, i+1)
				i = next
				arg = strings.TrimSpace(arg)
				if arg != "/dev/stdout" && arg != "/dev/stderr" {
					c.writes([]Arg{{Value: arg, Static: true, Span: a.Span}})
				}
			}
		case 'a', 'i', 'c':
			// Text to the end of the line (GNU one-liner form).
			_, i = sedLine(s, i)
		case 'b', 't', 'T', ':', 'q', 'Q', 'l', 'L':
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				i++
			}
		case '#':
			_, i = sedLine(s, i)
		}
	}
}

// sedLine returns the rest of the line from i (a file name or command
// runs to the end of the line), and the index after it.
func sedLine(s string, i int) (string, int) {
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[i:], len(s)
	}
	return s[i : i+end], i + end + 1
}

// skipSedAddress skips an address (or range) at i.
func skipSedAddress(s string, i int) int {
	for k := 0; k < 2; k++ {
		switch {
		case i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '$'):
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == '~' || s[i] == '+') {
				i++
			}
		case i < len(s) && (s[i] == '/' || s[i] == '\\'):
			delim := byte('/')
			if s[i] == '\\' && i+1 < len(s) {
				i++
				delim = s[i]
			}
			i++
			for i < len(s) && s[i] != delim {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			i++
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		default:
			return i
		}
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		return i
	}
	return i
}

// ruleEcho records what echo and printf print when it is fully known, so
// a shell fed by it, or a file it writes that is run later, can be read.
func ruleEcho(c *cmd) {
	for _, a := range c.args {
		if !a.Static {
			return
		}
	}
	out, ok := echoOutput(c.name, c.args)
	if ok {
		c.w.meta[c.idx].output, c.w.meta[c.idx].hasOut = out, true
	}
}

// ruleCat: cat with only a static here-document prints it; the files it
// reads are judged by argPaths.
func ruleCat(c *cmd) {
	if c.in.kind == stdinText && c.in.static && len(c.args) == 1 {
		c.w.meta[c.idx].output, c.w.meta[c.idx].hasOut = c.in.text, true
	}
}

// writtenText is what the line wrote to a file, as far as it is known.
type writtenText struct {
	text  string
	known bool
}

// wrote remembers that the line wrote a file, and what, for a later
// command of the line that runs it.
func (w *walker) wrote(a Arg, text string, known bool) {
	if !a.Static {
		return
	}
	if w.written == nil {
		w.written = map[string]writtenText{}
	}
	key := w.pathKey(a.Value)
	if prev, ok := w.written[key]; ok && known && prev.known {
		text = prev.text + text // appended
	}
	w.written[key] = writtenText{text: text, known: known}
}

// copied carries a written file's text to where it is copied or moved.
func (w *walker) copied(src, dst Arg) {
	if !src.Static || !dst.Static {
		return
	}
	if t, ok := w.written[w.pathKey(src.Value)]; ok {
		w.written[w.pathKey(dst.Value)] = t
	}
}

// echoOutput is what echo or printf print, when it can be known.
func echoOutput(name string, args []Arg) (string, bool) {
	switch name {
	case "echo":
		// bash's echo: words of only n, e and E letters after a dash are
		// options; -e turns backslash escapes on (-E off again).
		ws := args[1:]
		newline, escapes := true, false
		for len(ws) > 0 && len(ws[0].Value) > 1 && ws[0].Value[0] == '-' && strings.Trim(ws[0].Value[1:], "neE") == "" {
			for _, f := range ws[0].Value[1:] {
				switch f {
				case 'n':
					newline = false
				case 'e':
					escapes = true
				case 'E':
					escapes = false
				}
			}
			ws = ws[1:]
		}
		out := strings.Join(words(ws), " ")
		if escapes {
			var stop bool
			out, stop = echoEscapes(out)
			if stop {
				return out, true
			}
		}
		if newline {
			out += "\n"
		}
		return out, true
	case "printf":
		if len(args) < 2 {
			return "", false
		}
		ws := args[1:]
		if ws[0].Value == "--" {
			ws = ws[1:]
		}
		if len(ws) == 0 || ws[0].Value == "-v" {
			return "", false
		}
		// A nil config would make expand use (and write to) one shared
		// package-level config, output buffer included: concurrent
		// analyses raced on it. Each call gets its own.
		s, _, err := expand.Format(&expand.Config{}, ws[0].Value, words(ws[1:]))
		if err != nil {
			return "", false
		}
		return s, true
	}
	return "", false
}

// echoEscapes interprets the backslash escapes of echo -e; stop is set
// by \c, which ends the output (and its newline).
func echoEscapes(s string) (string, bool) {
	if !strings.Contains(s, "\\") {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'c':
			return b.String(), true
		case '0':
			// \0nnn: up to three octal digits.
			n, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			if r, ok := map[byte]byte{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': '\\'}[c]; ok {
				b.WriteByte(r)
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
