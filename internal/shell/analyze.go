package shell

import (
	"strings"

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
// and as "path args…", with inter-word white space collapsed.
func (a *Analysis) Projections() []string {
	out := []string{strings.Join(strings.Fields(a.Input), " ")}
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) == 0 {
			continue
		}
		words := c.Words()
		tail := strings.Join(strings.Fields(strings.Join(words[1:], " ")), " ")
		join := func(head string) string {
			if tail == "" {
				return head
			}
			return head + " " + tail
		}
		base := baseName(words[0])
		out = append(out, join(base))
		if base != words[0] {
			out = append(out, join(words[0]))
		}
	}
	return out
}
