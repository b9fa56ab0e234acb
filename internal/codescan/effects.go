package codescan

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// call is one call with evaluated arguments.
type call struct {
	name string // qualified name, for messages
	args []*value
	kw   map[string]*value
	self *value // the object of a method call
}

// arg returns positional argument i, or keyword name, or nil.
func (c *call) arg(i int, name string) *value {
	if name != "" {
		if v, ok := c.kw[name]; ok {
			return v
		}
	}
	if i >= 0 && i < len(c.args) {
		return c.args[i]
	}
	return nil
}

// effect carries out what a known call does to the analysis and returns
// the call's value.
type effect func(s *state, c *call) *value

// pathOf is the path a value names: a string, or a path or file object.
func pathOf(v *value) *value {
	if v != nil && v.k == kObj && v.fields["path"] != nil {
		return v.fields["path"]
	}
	if v == nil {
		return dynStr()
	}
	return v.asStr()
}

// Command shapes shared by the languages.

func shellLine(i int, name string) effect {
	return func(s *state, c *call) *value {
		v := c.arg(i, name)
		if v == nil {
			s.incomplete("%s without a command", c.name)
			return vData
		}
		if v.k == kList {
			s.command(withInput(s, c, s.argv(v.elems)))
			return vData
		}
		s.command(withInput(s, c, s.line(v, c.name)))
		return vData
	}
}

// spawnArgv runs a program: argument i is an argv list or a command
// string.
func spawnArgv(i int, name string) effect {
	return func(s *state, c *call) *value {
		v := c.arg(i, name)
		switch {
		case v == nil:
			s.incomplete("%s without arguments", c.name)
		case v.k == kList:
			s.command(withInput(s, c, s.argv(v.elems)))
		case v.k == kStr:
			s.command(withInput(s, c, s.line(v, c.name)))
		default:
			s.incomplete("%s with arguments not known before it runs", c.name)
		}
		return vData
	}
}

// withInput renders text given on a spawned program's standard input
// (input=, {input: …}) as piped into it: `bash` fed "rm -rf /" is
// judged as the pipe it is.
func withInput(s *state, c *call, cmd string) string {
	in, ok := c.kw["input"]
	if !ok || in.k == kNone {
		return cmd
	}
	return "printf '%s' " + s.word(in.asStr()) + " | " + cmd
}

// onPaths renders "cmd opts -- P…" for the path arguments at idx.
func onPaths(cmd string, idx ...int) effect {
	return func(s *state, c *call) *value {
		words := []string{cmd, "--"}
		if strings.Contains(cmd, " ") {
			words = []string{cmd, "--"}
		}
		for _, i := range idx {
			words = append(words, s.word(pathOf(c.arg(i, ""))))
		}
		s.command(strings.Join(words, " "))
		return vData
	}
}

// metaPath renders "cmd -- P" for a call that only looks at a path's
// name or metadata (os.listdir, os.stat), when the path is known: the
// analyser's rules about whose path it is (warden's own directories)
// still apply. An unknown or absent path adds nothing.
func metaPath(cmd string) effect {
	return func(s *state, c *call) *value {
		if p := c.arg(0, "path"); p != nil {
			if _, ok := pathOf(p).known(); ok {
				s.command(cmd + " -- " + s.word(pathOf(p)))
			}
		}
		return vData
	}
}

func writeTo(s *state, p *value, appendMode bool) {
	op := ">"
	if appendMode {
		op = ">>"
	}
	s.command(": " + op + " " + s.word(p))
}

// readFrom records a read of p and returns the content, a run-time
// string that remembers where it came from.
func readFrom(s *state, p *value) *value {
	if lit, ok := p.known(); ok && len(s.reads) < 200 {
		s.reads = append(s.reads, lit)
	}
	cmd := "cat -- " + s.word(p)
	s.command(cmd)
	return &value{k: kStr, parts: []part{{dyn: true, src: cmd}}}
}

// openFile handles open(path, mode): a write or a read of path.
func openFile(pathIdx int, pathKw string, modeIdx int) effect {
	return func(s *state, c *call) *value {
		p := pathOf(c.arg(pathIdx, pathKw))
		mode := "r"
		if m := c.arg(modeIdx, "mode"); m != nil {
			if ms, ok := m.known(); ok {
				mode = ms
			} else {
				mode = "w" // unknown mode: the worse reading
			}
		}
		return openPath(s, p, mode)
	}
}

// openPath opens p with an fopen-style mode: a write, an append or a
// read of p.
func openPath(s *state, p *value, mode string) *value {
	switch {
	case strings.Contains(mode, "a"):
		writeTo(s, p, true)
	case strings.ContainsAny(mode, "wx+"):
		writeTo(s, p, false)
	default:
		readFrom(s, p)
	}
	return obj("file", map[string]*value{"path": p})
}

func chmodEffect(pathIdx, modeIdx int) effect {
	return func(s *state, c *call) *value {
		m := c.arg(modeIdx, "mode")
		mode := s.word(dynStr())
		if m != nil && m.k == kNum {
			mode = strconv.FormatInt(m.n, 8)
		} else if m != nil && m.k == kStr {
			mode = s.word(m)
		}
		s.command("chmod " + mode + " -- " + s.word(pathOf(c.arg(pathIdx, "path"))))
		return vData
	}
}

func chownEffect(s *state, c *call) *value {
	ug := concat(c.argOr(1, "uid", "user"), str(":"), c.argOr(2, "gid", "group"))
	s.command("chown " + s.word(ug) + " -- " + s.word(pathOf(c.arg(0, "path"))))
	return vData
}

func (c *call) argOr(i int, names ...string) *value {
	for _, n := range names {
		if v, ok := c.kw[n]; ok {
			return v
		}
	}
	if v := c.arg(i, ""); v != nil {
		return v
	}
	return dynStr()
}

func killEffect(s *state, c *call) *value {
	sig := "-s KILL"
	if v := c.arg(1, ""); v != nil && v.k == kNum {
		sig = "-" + strconv.FormatInt(v.n, 10)
	} else if v != nil {
		sig = "-s " + s.word(v.asStr())
	}
	s.command("kill " + sig + " -- " + s.word(c.argOr(0)))
	return vData
}

// httpEffect renders a request as curl: method, the body (a file it
// reads is an upload of that file), the URL.
func httpEffect(method string, urlIdx int, urlKw string) effect {
	return func(s *state, c *call) *value {
		m := method
		ui := urlIdx
		if m == "" { // request(method, url)
			if v := c.arg(0, "method"); v != nil {
				if ms, ok := v.known(); ok {
					m = strings.ToUpper(ms)
				} else {
					m = "POST"
				}
			}
			ui = 1
		}
		u := c.arg(ui, urlKw)
		if u == nil {
			u = dynStr()
		}
		if u.k == kObj && u.fields["url"] != nil { // urllib Request
			if d := u.fields["data"]; d != nil {
				c.kw["data"] = d
			}
			u = u.fields["url"]
		}
		words := []string{"curl"}
		if m != "" && m != "GET" {
			words = append(words, "-X", m)
		}
		for _, k := range []string{"data", "json", "body", "content"} {
			d, ok := c.kw[k]
			if !ok {
				continue
			}
			words = append(words, body(s, d)...)
		}
		if f, ok := c.kw["files"]; ok {
			if f.k == kDict {
				for i, e := range f.elems {
					words = append(words, "-F", s.word(concat(str(f.keys[i]+"=@"), pathOf(e))))
				}
			} else {
				words = append(words, "-F", s.word(concat(str("f=@"), dynStr())))
			}
		}
		words = append(words, "--", s.word(u))
		s.command(strings.Join(words, " "))
		return obj("response", nil)
	}
}

// body renders a request body: a file object is an upload of the file.
func body(s *state, d *value) []string {
	if d.k == kObj && d.qual == "file" {
		return []string{"--data-binary", s.word(concat(str("@"), pathOf(d)))}
	}
	if d.k == kDict {
		var out []string
		for i, e := range d.elems {
			out = append(out, "--data-binary", s.word(concat(str(d.keys[i]+"="), e.asStr())))
			if e.k == kObj && e.qual == "file" {
				out[len(out)-1] = s.word(concat(str("@"), pathOf(e)))
			}
		}
		return out
	}
	return []string{"--data-binary", s.word(d.asStr())}
}

func downloadTo(urlIdx, fileIdx int) effect {
	return func(s *state, c *call) *value {
		s.command("curl -o " + s.word(pathOf(c.arg(fileIdx, "filename"))) + " -- " + s.word(c.argOr(urlIdx, "url")))
		return vData
	}
}

func connectEffect(s *state, addr *value) {
	if addr != nil && addr.k == kStr {
		// A unix socket's path.
		s.command("nc -U " + s.word(addr))
		s.find(ClassNetwork, Dangerous, "opens a network connection")
		return
	}
	host, port := dynStr(), dynStr()
	if addr != nil && addr.k == kList && len(addr.elems) >= 2 {
		host, port = addr.elems[0], addr.elems[1]
	}
	s.command("nc " + s.word(host) + " " + s.word(port))
	s.find(ClassNetwork, Dangerous, "opens a network connection")
}

// Folding: calls whose result on literals is computed, so an encoded or
// assembled payload is read as what it becomes.

func b64decode(s *state, c *call) *value {
	v := c.arg(0, "s")
	if lit, ok := v.known(); ok {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(strings.TrimSpace(lit)); err == nil {
				return str(string(b))
			}
		}
	}
	return dynStr()
}

func hexdecode(s *state, c *call) *value {
	if lit, ok := c.arg(0, "").known(); ok {
		if b, err := hex.DecodeString(strings.ReplaceAll(lit, " ", "")); err == nil {
			return str(string(b))
		}
	}
	return dynStr()
}

func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
