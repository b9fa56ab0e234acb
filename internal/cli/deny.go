package cli

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/policy"
)

// checkRules is the policy one warden check run applies. It is loaded
// once per run, before the first command is looked at, and only read
// afterwards.
type checkRules struct {
	// deny are the approvals.deny rules of --config, which turn an
	// analysis verdict into "denied"; nil without --config.
	deny explain.DenyMatcher
	// gate decides as an owner (--as, or "as" on a --jsonl line); nil
	// when the run decides nothing.
	gate *gate.Gate
}

// loadRules reads the config file at path (no path means the defaults)
// and compiles what the run needs: the approvals.deny rules when a file
// is given, and the whole policy when decide is set. This is the only
// place warden check touches internal/config, internal/policy and
// gate.Compile.
//
// Config warnings are printed and the check goes on: they flag keys that
// are ignored, which changes nothing the rules decide. An unreadable file,
// a bad glob or a policy that does not compile is an error (exit 2):
// checking without rules the user wrote would report "safe" for what
// their config denies.
func loadRules(path string, decide bool, stderr io.Writer) (*checkRules, error) {
	rules := &checkRules{}
	if path == "" && !decide {
		return rules, nil
	}
	cfg := config.Default()
	if path != "" {
		var (
			warnings []config.Warning
			err      error
		)
		cfg, warnings, err = config.Load(path)
		if err != nil {
			return nil, err // already "load config: …" or "FILE: [line:col] …"
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "warden: warning: %v\n", w) // w names the file and position
		}
		deny, err := policy.CompileDeny(cfg.Approvals.Deny)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		rules.deny = deny
	}
	if decide {
		g, err := newGate(cfg, path)
		if err != nil {
			return nil, err
		}
		rules.gate = g
	}
	return rules, nil
}

// newGate compiles cfg (read from path, "" for the defaults) into a gate
// as a host would build it, with the host facts resolved here at the
// edge. There is no host yet, so the only grants are the config's
// command_allowlist, and there is no session yolo and no guardian.
func newGate(cfg *config.Config, path string) (*gate.Gate, error) {
	p, err := gate.Compile(cfg, hostPaths(path))
	if err != nil {
		if path == "" {
			return nil, fmt.Errorf("compile the default policy: %w", err)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	g, err := gate.New(gate.Options{Policy: p})
	if err != nil {
		return nil, fmt.Errorf("start the gate: %w", err)
	}
	return g, nil
}
