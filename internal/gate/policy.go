package gate

import (
	"fmt"
	"path"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/reads"
	"github.com/wardenhq/warden/internal/shell"
)

// Policy is a configuration compiled for deciding: globs compiled, the
// allowlist parsed into grants, paths resolved. It is immutable; a
// reload compiles a new one and swaps it in.
type Policy struct {
	Mode                   policy.Mode
	Timeout                time.Duration
	CronMode               policy.UnattendedMode
	KanbanMode             policy.UnattendedMode
	SingleQueryMode        policy.UnattendedMode
	UnattendedMode         policy.UnattendedMode
	DenialBreakerThreshold int

	deny      *policy.DenyRules
	allowlist []grant.Grant
	tools     []toolRule
	protected []*policy.Glob
	safeRoots []string
	home      string
	analyser  shell.Options
	digest    string
	// table is the protected-path table; env resolves paths for it.
	table *protect.Table
	fs    protect.FS
	homes func(string) (string, bool)
	// reads judges a hook's reads with the same table and deny rules.
	reads *reads.Judge
}

type toolRule struct {
	glob    *policy.Glob
	verdict policy.Verdict
}

// Paths are the host facts a policy needs that no config file holds. The
// CLI resolves them at the edge; the gate never looks them up.
type Paths struct {
	// Home is the user's home directory, for "~" in write rules.
	Home string
	// Protected are warden's own config file, state directory and grant
	// store: reading or writing them is hardline (invariant 11).
	Protected []string
	// FS follows symlinks when paths are judged; nil is the host's file
	// system (protect.OSFS), so a link is always judged on its target.
	FS protect.FS
	// Homes finds "~user" home directories; nil leaves them literal.
	Homes func(user string) (string, bool)
}

// Compile turns a parsed config into a Policy.
func Compile(cfg *config.Config, paths Paths) (*Policy, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	a := cfg.Approvals
	p := &Policy{
		Mode: a.Mode, Timeout: a.Timeout,
		CronMode: a.CronMode, KanbanMode: a.KanbanMode, SingleQueryMode: a.SingleQueryMode, UnattendedMode: a.UnattendedMode,
		DenialBreakerThreshold: a.DenialBreakerThreshold,
		home:                   path.Clean(paths.Home),
		digest:                 cfg.Digest,
	}
	var err error
	if p.deny, err = policy.CompileDeny(a.Deny); err != nil {
		return nil, fmt.Errorf("compile approvals.deny: %w", err)
	}
	for _, e := range cfg.CommandAllowlist {
		g, err := grant.Parse(e)
		if err != nil {
			return nil, fmt.Errorf("compile command_allowlist: %w", err)
		}
		g.Scope, g.ID, g.By = grant.Permanent, "allowlist:"+g.String(), "config"
		p.allowlist = append(p.allowlist, g)
	}
	for _, r := range cfg.MCP.Rules {
		gl, err := policy.CompileGlob(r.Match)
		if err != nil {
			return nil, fmt.Errorf("compile mcp rule %q: %w", r.Match, err)
		}
		p.tools = append(p.tools, toolRule{glob: gl, verdict: r.Verdict})
	}
	for _, pr := range cfg.Write.Protected {
		gl, err := policy.CompileGlob(p.expand(pr))
		if err != nil {
			return nil, fmt.Errorf("compile write.protected %q: %w", pr, err)
		}
		p.protected = append(p.protected, gl)
	}
	for _, r := range cfg.Write.SafeRoots {
		p.safeRoots = append(p.safeRoots, path.Clean(p.expand(r)))
	}
	p.analyser.Profile = cfg.Analysis.Profile
	p.fs, p.homes = paths.FS, paths.Homes
	if p.fs == nil {
		p.fs = protect.OSFS{}
	}
	// warden's own paths also by where their symlinks lead: a state
	// directory under a linked home is protected under both names.
	own := reads.Own(p.fs, paths.Protected)
	p.table = protect.New(protect.Paths{Extra: own})
	p.reads = reads.New(p.table, p.deny, p.home, p.homes, p.fs)
	// The analyser checks recursive operations against the same paths.
	p.analyser.ProtectedPaths = own
	// Prepared once: a decision only adds the directory it runs in.
	if p.home != "" && p.home != "." {
		p.analyser.Home = p.home
	}
	p.analyser.Homes, p.analyser.FS, p.analyser.Protect = p.homes, p.fs, p.table
	return p, nil
}

// expand replaces a leading "~" with the home directory.
func (p *Policy) expand(s string) string { return reads.Expand(p.home, s) }

// Protected is the policy's protected-path table.
func (p *Policy) Protected() *protect.Table { return p.table }

// resolveEnv is how paths of an action running in dir are resolved.
func (p *Policy) resolveEnv(dir string) protect.Env {
	home := p.home
	if home == "." {
		home = ""
	}
	return protect.Env{Cwd: dir, Home: home, Homes: p.homes, FS: p.fs}
}

// Analyse analyses a shell command with this policy's protected paths,
// in no particular directory.
func (p *Policy) Analyse(cmd string) *shell.Analysis { return p.AnalyseIn(cmd, "") }

// AnalyseIn analyses a shell command that runs in dir (the directory the
// owner's terminal is in, or the hook's cwd; "" when unknown): relative
// paths, ~ and symlinks resolve as they will when it runs, against the
// policy's protected-path table.
func (p *Policy) AnalyseIn(cmd, dir string) *shell.Analysis {
	o := p.analyser
	if path.IsAbs(dir) {
		o.Cwd = path.Clean(dir)
	}
	return o.Analyze(cmd)
}

// Digest is the SHA-256 of the config text the policy was compiled from
// ("" for the defaults); audit records carry it.
func (p *Policy) Digest() string { return p.digest }
