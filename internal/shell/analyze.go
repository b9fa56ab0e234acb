package shell

import "strings"

// Options bound the analysis. The zero value means the defaults.
type Options struct {
	// MaxBytes caps the input size (default 256 KiB).
	MaxBytes int
	// MaxDepth caps recursion into payloads: sh -c, eval, su -c, a
	// program-bearing option (default 16).
	MaxDepth int
	// MaxCommands caps the number of candidates (default 10,000).
	MaxCommands int
	// ProtectedPaths are extra paths (warden's config file, state
	// directory) whose writes are hardline.
	ProtectedPaths []string
}

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
