package shell

import (
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/protect"
)

// Options bound the analysis. The zero value means the defaults.
type Options struct {
	// MaxBytes caps the input size (default 256 KiB).
	MaxBytes int
	// MaxDepth caps recursion into payloads: sh -c, eval, su -c, a
	// program-bearing option (default 16).
	MaxDepth int
	// MaxCommands caps the number of candidates (default 10,000).
	MaxCommands int
	// ProtectedPaths are warden's own files and directories (its config
	// file, state directory): any access to them is hardline
	// (warden.self_access), besides the default places under the owner's
	// home and XDG directories.
	ProtectedPaths []string
	// Cwd is the absolute directory the command starts in ("" when
	// unknown: a relative path that climbs out of it is taken to reach
	// the root). It comes from the owner's session (the directory the
	// terminal tool runs in, the hook's cwd), never from warden's own
	// working directory.
	Cwd string
	// Home is the owner's home directory ("" when unknown: "~" stays
	// symbolic). Like Env, it is the owner's, not warden's.
	Home string
	// Env holds variables of the owner's terminal that paths may name:
	// HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, TMPDIR, WARDEN_STATE. Never
	// warden's own environment.
	Env map[string]string
	// Homes resolves ~user (nil: ~user stays symbolic).
	Homes func(user string) (string, bool)
	// Protect is the protected-path table (nil: the built-in one, with
	// ProtectedPaths as warden's own).
	Protect *protect.Table
	// FS lets path resolution follow symlinks of existing components
	// (nil: lexical only). It is the only way the analysis touches a
	// file system.
	FS protect.FS
	// Profile is the analysis profile: "" (the default) judges the
	// catalogue; ProfileStrict also makes any program that is not on the
	// known-safe list dangerous.
	Profile string
	// Explain records how each candidate's options were read
	// (Command.Parse), for warden check --explain.
	Explain bool

	// general turns the fast path off (see walker.fast): the
	// differential test compares the two.
	general bool
}

// ProfileStrict is the profile in which a program not on the known-safe
// list is dangerous (analysis.profile: strict).
const ProfileStrict = "strict"

// Analyze analyses src with default options.
func Analyze(src string) *Analysis { return Options{}.Analyze(src) }

// Projections returns the strings user deny rules are matched against:
// the whole normalised command, then each candidate as "basename args…"
// and as "path args…", with inter-word white space collapsed (as
// strings.Fields and a single space would).
func (a *Analysis) Projections() []string {
	return a.AppendProjections(make([]string, 0, 1+2*len(a.Commands)))
}

// AppendProjections appends Projections' strings to dst. The
// candidates' projections are written into one buffer and converted to
// one string, which they are slices of.
func (a *Analysis) AppendProjections(dst []string) []string {
	out := append(dst, CollapseFields(a.Input))
	var stack [256]byte
	buf := stack[:0]
	// Each candidate's "path args…" is buf[start:end], its head
	// buf[start:start+len(head)]; head alone when it has no arguments.
	type span struct{ start, end, head int }
	var spans [8]span
	sp := spans[:0]
	withArgs := false
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) == 0 {
			continue
		}
		head := c.Argv[0].Value
		start := len(buf)
		buf = append(buf, head...)
		for _, arg := range c.Argv[1:] {
			buf = appendFields(buf, arg.Value)
		}
		sp = append(sp, span{start, len(buf), len(head)})
		withArgs = withArgs || len(buf)-start > len(head)
	}
	all := ""
	if withArgs {
		all = string(buf)
	}
	k := 0
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) == 0 {
			continue
		}
		s := sp[k]
		k++
		head := c.Argv[0].Value
		whole := head
		if s.end-s.start > s.head {
			whole = all[s.start:s.end]
		}
		base := baseName(head)
		switch {
		case base == head:
			out = append(out, whole)
		case strings.HasSuffix(head, base):
			// "path args…" ends with "basename args…".
			out = append(out, whole[len(head)-len(base):], whole)
		default:
			out = append(out, base+whole[len(head):], whole)
		}
	}
	return out
}

// appendFields appends each field of s (as strings.Fields splits it)
// preceded by a space.
func appendFields(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			for _, f := range strings.Fields(s) {
				buf = append(append(buf, ' '), f...)
			}
			return buf
		}
	}
	for i := 0; i < len(s); {
		for i < len(s) && asciiSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !asciiSpace(s[j]) {
			j++
		}
		if j > i {
			buf = append(append(buf, ' '), s[i:j]...)
		}
		i = j
	}
	return buf
}

// asciiSpace is unicode.IsSpace for an ASCII byte.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// CollapseFields is strings.Join(strings.Fields(s), " "), without
// allocating when s is already in that form.
func CollapseFields(s string) string {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return strings.Join(strings.Fields(s), " ")
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}
