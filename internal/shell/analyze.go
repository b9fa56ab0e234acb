package shell

// Options bound the analysis. The zero value means the defaults.
type Options struct {
	// MaxBytes caps the input size (default 256 KiB).
	MaxBytes int
	// MaxDepth caps recursion into payloads (sh -c, eval, $(…)) and
	// syntax nesting (default 16 for payloads).
	MaxDepth int
	// MaxCommands caps the number of candidates (default 10,000).
	MaxCommands int
	// ProtectedPaths are extra absolute paths (warden's config file,
	// state directory) whose writes are hardline.
	ProtectedPaths []string
}

// Analyze analyses src with default options.
func Analyze(src string) *Analysis { return Options{}.Analyze(src) }

// Analyze analyses src. It never panics and always returns a verdict.
func (o Options) Analyze(src string) *Analysis {
	return &Analysis{Input: src, Verdict: Safe}
}

// Projections returns the strings user deny rules are matched against:
// the whole normalised command, then each candidate as "basename args…"
// and as "path args…".
func (a *Analysis) Projections() []string {
	out := []string{a.Input}
	return out
}
