package grant

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/shell"
)

// ErrNotCovered: a prefix pattern a human chose does not cover the
// action being approved, so recording it would grant something else.
var ErrNotCovered = errors.New("prefix pattern does not cover this command")

// subcommandTools take a verb as their first operand.
var subcommandTools = map[string]bool{"git": true, "docker": true, "podman": true, "kubectl": true, "helm": true, "npm": true, "pnpm": true, "yarn": true,
	"pip": true, "pip3": true, "apt": true, "apt-get": true, "systemctl": true, "terraform": true, "cargo": true, "go": true, "brew": true, "gh": true}

// DefaultPrefix proposes an argv prefix for the first flagged command:
// its name, the verb of tools that have one, and the options before the
// first operand, so one click grants `systemctl restart *`, not every
// systemctl. It proposes none (and no prefix grain is offered) unless
// every finding's class is shell.Prefixable: a prefix of a delete, a
// disk write or a history rewrite would grant the next, worse one.
func DefaultPrefix(a *shell.Analysis) string {
	if !PrefixOffered(a) {
		return ""
	}
	for _, f := range a.Findings {
		if f.Command < 0 || f.Command >= len(a.Commands) {
			continue
		}
		words := a.Commands[f.Command].Words()
		if len(words) == 0 {
			continue
		}
		p := []string{words[0]}
		rest := words[1:]
		if len(rest) > 0 && subcommandTools[path.Base(words[0])] && !strings.HasPrefix(rest[0], "-") {
			p, rest = append(p, rest[0]), rest[1:]
		}
		for _, w := range rest {
			if !strings.HasPrefix(w, "-") || len(p) >= 5 {
				break
			}
			p = append(p, w)
		}
		return strings.Join(p, " ")
	}
	return ""
}

// PrefixOffered reports whether a prefix grant may be chosen for a
// command with analysis a: it was flagged, and only for prefixable
// classes.
func PrefixOffered(a *shell.Analysis) bool {
	if len(a.Findings) == 0 {
		return false
	}
	for _, f := range a.Findings {
		if !shell.Prefixable(f.Class) {
			return false
		}
	}
	return true
}

// CheckPrefix refuses a prefix grant for a command whose classes are
// not prefixable, and a pattern that would not cover the command's own
// analysis a ("" is the default prefix, which covers it). Its errors
// wrap ErrNotCovered.
func CheckPrefix(a *shell.Analysis, pattern string) error {
	if !PrefixOffered(a) {
		return fmt.Errorf("%w: a prefix grant is not offered for %s (it is destructive, or warden cannot see what runs): approve this exact command instead", ErrNotCovered, strings.Join(findingClasses(a), ", "))
	}
	if pattern == "" {
		return nil
	}
	g, err := Parse(PrefixPattern(pattern))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotCovered, err)
	}
	g.Scope = Permanent
	if _, ok := Cover([]Grant{g}, a, "", time.Now()); !ok {
		return fmt.Errorf("%w: %q", ErrNotCovered, PrefixPattern(pattern))
	}
	return nil
}

// PrefixPattern is pattern as a prefix grant's pattern: its words
// followed by " *".
func PrefixPattern(pattern string) string {
	if !strings.HasSuffix(pattern, " *") {
		pattern += " *"
	}
	return pattern
}

// The stored forms: a request keeps its shell analysis as JSON (the
// broker and the store know rows, not analysis types), and these read it.

// DefaultPrefixJSON is DefaultPrefix of a stored analysis; "" when there
// is none or it does not decode.
func DefaultPrefixJSON(analysis []byte) string {
	var a shell.Analysis
	if len(analysis) == 0 || json.Unmarshal(analysis, &a) != nil {
		return ""
	}
	return DefaultPrefix(&a)
}

// CheckPrefixJSON is CheckPrefix of a stored analysis; a request without
// one (or whose analysis does not decode) gets no prefix grant.
func CheckPrefixJSON(analysis []byte, pattern string) error {
	var a shell.Analysis
	if len(analysis) == 0 || json.Unmarshal(analysis, &a) != nil {
		return fmt.Errorf("%w: %q (the request has no analysis)", ErrNotCovered, pattern)
	}
	return CheckPrefix(&a, pattern)
}

// findingClasses lists the classes of a's findings, each once.
func findingClasses(a *shell.Analysis) []string {
	var out []string
	for _, f := range a.Findings {
		if !slices.Contains(out, f.Class) {
			out = append(out, f.Class)
		}
	}
	return out
}
