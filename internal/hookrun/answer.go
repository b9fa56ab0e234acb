package hookrun

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/reads"
)

// Answer is the hook answer for a host's decision.
func Answer(dec Decision) hook.Answer {
	a := hook.Answer{Verdict: hook.Allow, Rule: dec.Rule, RequestID: dec.RequestID, Classes: dec.Classes, Reason: Why(dec.Reason, dec.Verdict, dec.Rule),
		Vouched: Vouched(dec.Rule, dec.RequestID)}
	if !dec.Allowed {
		a.Verdict, a.Reason = hook.Deny, dec.Message
	}
	return a
}

// Vouched reports whether a person stands behind an allow: a human
// answered the question (requestID, rule human), or a grant a human
// made or an mcp.rules allow the operator wrote covers it. A safe
// command, a bypass (mode off, yolo, a container backend) and a
// reviewer model's approval are not: a hook answers those with no
// decision (hook.Answer.Vouched), so the agent's own guard still
// applies.
func Vouched(rule, requestID string) bool {
	switch rule {
	case ruleHuman, ruleToolAllow, ruleGrantExact, ruleGrantPrefix, ruleGrantClass:
		return true
	}
	return requestID != ""
}

// Why is the gate's explanation for a person without its "VERDICT
// (RULE): " prefix, which the hook answer carries in fields of its own:
// "shell command `git push -f` — git force push [git.force_push]".
func Why(human, verdict, rule string) string {
	return strings.TrimPrefix(human, verdict+" ("+rule+"): ")
}

// The gate's rule ids (gate.Rule*), restated: importing the gate would
// link the shell analyser into warden-hook. TestRulesMatchGate keeps
// them equal.
const (
	ruleHuman       = "human"
	ruleToolAllow   = "rule.allow"
	ruleGrantExact  = "grant.exact"
	ruleGrantPrefix = "grant.prefix"
	ruleGrantClass  = "grant.class"
	ruleDenyRule    = "floor.deny_rule"
	ruleHardline    = "floor.hardline"
)

// RuleSecretRead is the rule of a hook's ask for a read of a secret.
const RuleSecretRead = "hook.secret_read"

// JudgeRead answers for Claude Code's Read, Grep and Glob: a read of a
// secret (an SSH key, cloud or registry credentials, a .env file, a
// token: the protected-path table's read entries) gets ask, so the
// agent's own prompt asks the user before the secret reaches the model;
// warden's own state and config, and paths a user deny rule names
// ("read PATH" subjects in approvals.deny), get deny. Anything else
// passes to the agent's own rules.
func JudgeRead(r *reads.Judge, c hook.Call) hook.Answer {
	return JudgeReads(r.Judge(c.Dir, c.Reads, c.ReadGlobs), c)
}

// JudgeReads is the hook answer for a read judgement of c.
func JudgeReads(j reads.Judgement, c hook.Call) hook.Answer {
	what := strings.ToLower(c.Tool) + " of " + j.Path
	switch {
	case j.DenyRule != "":
		return hook.Answer{Verdict: hook.Deny, Rule: ruleDenyRule, Reason: "warden blocked this " + strings.ToLower(c.Tool) + ": a deny rule of the user covers it. Do not retry it or variations of it."}
	case j.Match.Tier == protect.Hardline:
		return hook.Answer{Verdict: hook.Deny, Rule: ruleHardline, Classes: []string{j.Match.Class},
			Reason: "warden blocked this " + what + ": " + j.Match.Why + " is out of the agent's reach. Do not retry it or variations of it."}
	case j.Match.Protected():
		return hook.Answer{Verdict: hook.Ask, Rule: RuleSecretRead, Classes: []string{j.Match.Class},
			Reason: what + " reads " + j.Match.Why + " [" + j.Match.Class + "]: what the agent reads can leave in its next message"}
	}
	return hook.Answer{Verdict: hook.Pass}
}

// ReadPaths are the paths of a read judgement: the hook's own, with the
// state directory and config file protected too.
func ReadPaths(paths reads.Paths, stateDir, configPath string) reads.Paths {
	paths.Protected = slices.Clone(paths.Protected)
	if stateDir != "" {
		paths.Protected = append(paths.Protected, stateDir)
	}
	if configPath != "" {
		paths.Protected = append(paths.Protected, configPath)
	}
	return paths
}

// loadConfig reads the config file at path: nil when there is none (the
// defaults).
func loadConfig(path string) (*config.Config, error) {
	cfg, _, err := config.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// compile compiles cfg (nil: the defaults) for judging reads, with the
// audit anchor file protected as the host protects it.
func compile(cfg *config.Config, path string, paths reads.Paths) (*reads.Judge, error) {
	if a := anchorFile(cfg); a != "" && !slices.Contains(paths.Protected, a) {
		paths.Protected = append(slices.Clip(paths.Protected), a)
	}
	p, err := reads.Compile(cfg, paths)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return p, nil
}

func anchorFile(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.Audit.AnchorFile
}
