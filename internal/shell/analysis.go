// Package shell analyses a shell command line into the commands it would
// execute and the classes of danger they carry. It parses with
// mvdan.cc/sh/v3 (bash dialect), sees through launchers, code carriers and
// word tricks, and never runs anything. It is pure: no environment, no
// file system, no clock.
package shell

import (
	"slices"
	"strings"
)

// Verdict is the analysis outcome for a whole command line.
type Verdict string

// Verdicts, from least to most severe. The gate denies hardline and
// malformed outright. A line with a floor finding (a protected path) is
// hardline too: no mode lets it through.
const (
	Safe      Verdict = "safe"
	Dangerous Verdict = "dangerous"
	Hardline  Verdict = "hardline"
	Malformed Verdict = "malformed"
)

// Tier is how serious a class is.
type Tier string

// Tiers of the catalogue.
const (
	TierDangerous Tier = "dangerous"
	// TierFloor is a protected path: denied in every mode, whichever way
	// it is written to, but not a catastrophe.
	TierFloor    Tier = "floor"
	TierHardline Tier = "hardline"
)

// Span is a byte range [Start, End) of the analysed text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Arg is one word of a command's argv.
type Arg struct {
	// Value is the word with quoting removed when Static; otherwise a
	// readable shape of the word ("$HOME/x", "$(…)").
	Value string `json:"value"`
	// Static is true when Value is exactly what the shell would pass
	// (modulo globbing, see Glob).
	Static bool `json:"static"`
	// Glob is true when the word has unquoted pattern characters.
	Glob bool `json:"glob,omitempty"`
	Span Span `json:"span"`

	// off is 1 + the offset in Analysis.Input where Value appears verbatim
	// (0: it does not), so payload spans can point into the input.
	off int32
	// subst is 1 + the index in the walker's list of the commands its
	// substitutions run (0: none); an index keeps Arg small.
	subst int32
}

// Redirect is one redirection attached to a command.
type Redirect struct {
	Op     string `json:"op"`
	Target Arg    `json:"target"`
	// fd is the descriptor redirected when written (3 of 3<>), or "".
	fd string
}

// Command is one executed command candidate.
type Command struct {
	// Argv is the command's words, launchers already peeled off.
	Argv []Arg `json:"argv"`
	// Via lists how the command was reached, outermost first: "sudo",
	// "bash -c", "$(…)", "function f", "find -exec", ….
	Via []string `json:"via,omitempty"`
	// Assigns are NAME=VALUE prefixes and env(1) assignments in effect.
	Assigns []string   `json:"assigns,omitempty"`
	Redirs  []Redirect `json:"redirs,omitempty"`
	Span    Span       `json:"span"`
	// Parse is how the program's options were read (Options.Explain
	// only): "--user=root operands: rm -rf /".
	Parse string `json:"parse,omitempty"`
}

// Name is the basename of argv[0], or "" when argv is empty or dynamic.
func (c *Command) Name() string {
	if len(c.Argv) == 0 || !c.Argv[0].Static {
		return ""
	}
	return baseName(c.Argv[0].Value)
}

// Path is argv[0] as written (after quote removal).
func (c *Command) Path() string {
	if len(c.Argv) == 0 {
		return ""
	}
	return c.Argv[0].Value
}

// Words returns argv values.
func (c *Command) Words() []string {
	out := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		out[i] = a.Value
	}
	return out
}

// String renders the argv as a readable line.
func (c *Command) String() string { return strings.Join(c.Words(), " ") }

// Finding is one matched class.
type Finding struct {
	Class       string `json:"class"`
	Tier        Tier   `json:"tier"`
	Description string `json:"description"`
	// Command is the index in Analysis.Commands the finding is about, or
	// -1 for structural findings (pipelines, fork bombs).
	Command int  `json:"command"`
	Span    Span `json:"span"`
	// Opaque is set when the finding is about something the analyser
	// could not see into (see Class.Opaque).
	Opaque bool `json:"opaque,omitempty"`
	// Detail says more about this finding than the class does: the path
	// or option that decided ("/home/u/.ssh/id_rsa", "unknown option
	// --frob").
	Detail string `json:"detail,omitempty"`
}

// Analysis is what a command line does.
type Analysis struct {
	// Input is the text that was parsed: the caller's command after
	// normalisation (control bytes and ANSI escapes removed, NFKC).
	// Spans index into it.
	Input    string    `json:"input"`
	Verdict  Verdict   `json:"verdict"`
	Commands []Command `json:"commands"`
	Findings []Finding `json:"findings"`
	// Dynamic is true when some execution could not be resolved
	// statically.
	Dynamic bool `json:"dynamic,omitempty"`
	// Error explains a malformed verdict (parse error with position, or
	// which cap was exceeded).
	Error string `json:"error,omitempty"`
}

// Opaque reports whether some finding is about something the analyser
// could not see into: such a line is never allowed by a bypass or a
// prefix grant (invariant 12).
func (a *Analysis) Opaque() bool {
	for _, f := range a.Findings {
		if f.Opaque {
			return true
		}
	}
	return false
}

// Classes returns the distinct class keys, in first-seen order.
func (a *Analysis) Classes() []string { return a.AppendClasses(nil) }

// AppendClasses appends Classes' keys to dst (nothing when there are
// no findings).
func (a *Analysis) AppendClasses(dst []string) []string {
	first := len(dst)
	for _, f := range a.Findings {
		if !slices.Contains(dst[first:], f.Class) {
			dst = append(dst, f.Class)
		}
	}
	return dst
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
