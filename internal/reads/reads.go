// Package reads judges reading paths: against the protected-path table's
// read entries and the user's "read PATH" deny rules. The gate judges a
// hook's Read, Grep and Glob with it (gate.Policy.JudgeRead), and so
// does the warden-hook binary, which must not link the shell analyser:
// this package needs only the table, the deny rules and the config.
package reads

import (
	"fmt"
	"path"
	"strings"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/protect"
)

// Judge judges reads for one compiled config. It is immutable.
type Judge struct {
	table *protect.Table
	deny  *policy.DenyRules
	home  string // "" when unknown
	homes func(string) (string, bool)
	fs    protect.FS
}

// Paths are the host facts a judge needs (gate.Paths' fields).
type Paths struct {
	// Home is the user's home directory, for "~".
	Home string
	// Protected are warden's own files: reading them is hardline.
	Protected []string
	// FS follows symlinks; nil is the host's file system.
	FS protect.FS
	// Homes finds "~user" home directories; nil leaves them literal.
	Homes func(user string) (string, bool)
}

// Own returns warden's own protected paths as the table holds them:
// cleaned, and also by where their symlinks lead (a state directory
// under a linked home is protected under both names).
func Own(fs protect.FS, protected []string) []string {
	var own []string
	for _, pp := range protected {
		if pp != "" {
			own = append(own, protect.Resolve(protect.Env{FS: fs}, path.Clean(pp))...)
		}
	}
	return own
}

// New returns a judge over a compiled table and deny rules.
func New(table *protect.Table, deny *policy.DenyRules, home string, homes func(string) (string, bool), fs protect.FS) *Judge {
	if home == "." {
		home = ""
	}
	return &Judge{table: table, deny: deny, home: home, homes: homes, fs: fs}
}

// Compile builds the judge of cfg (nil: the defaults) as gate.Compile
// builds its policy's.
func Compile(cfg *config.Config, p Paths) (*Judge, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	deny, err := policy.CompileDeny(cfg.Approvals.Deny)
	if err != nil {
		return nil, fmt.Errorf("compile approvals.deny: %w", err)
	}
	fs := p.FS
	if fs == nil {
		fs = protect.OSFS{}
	}
	table := protect.New(protect.Paths{Extra: Own(fs, p.Protected)})
	return New(table, deny, path.Clean(p.Home), p.Homes, fs), nil
}

// Expand replaces a leading "~" with home ("" or ".": unchanged).
func Expand(home, s string) string {
	if home == "" || home == "." {
		return s
	}
	if s == "~" {
		return home
	}
	if strings.HasPrefix(s, "~/") {
		return home + s[1:]
	}
	return s
}

// Judgement is how reading some paths is judged: the worst match in the
// protected-path table, and a user deny rule that matched ("read PATH"
// subjects).
type Judgement struct {
	Match protect.Match
	// Path is the resolved path or pattern that matched.
	Path     string
	DenyRule string
}

// Judge judges reading paths and shell globs named from dir (a hook's
// Read, Grep and Glob): resolved as writes are (~, relative, ..,
// symlinks), against the table's read entries. A directory is judged
// with what lies under it (protect.MatchTree).
func (r *Judge) Judge(dir string, paths, globs []string) Judgement {
	var j Judgement
	env := protect.Env{Cwd: dir, Home: r.home, Homes: r.homes, FS: r.fs}
	var subjects []string
	for _, raw := range paths {
		for _, c := range protect.Resolve(env, Expand(r.home, raw)) {
			subjects = append(subjects, "read "+c)
			if m := r.table.MatchTree(c, protect.Read); m.Tier > j.Match.Tier {
				j.Match, j.Path = m, c
			}
		}
	}
	for _, g := range globs {
		g = Expand(r.home, g)
		if !path.IsAbs(g) && path.IsAbs(env.Cwd) {
			g = env.Cwd + "/" + g
		}
		subjects = append(subjects, "read "+g)
		if m := r.table.MatchGlob(g, protect.Read, false); m.Tier > j.Match.Tier {
			j.Match, j.Path = m, g
		}
	}
	if glob, ok := r.deny.Match(subjects); ok {
		j.DenyRule = glob
	}
	return j
}
