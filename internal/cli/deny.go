package cli

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/policy"
)

// loadDenyRules reads the config file at path and compiles its
// approvals.deny rules; no path means no rules. This is the only place
// warden check touches internal/config and internal/policy.
//
// Config warnings are printed and the check goes on: they flag keys that
// are ignored, which changes nothing the rules decide. An unreadable file
// or a bad glob is an error (exit 2): checking without rules the user
// wrote would report "safe" for what their config denies.
func loadDenyRules(path string, stderr io.Writer) (denyMatcher, error) {
	if path == "" {
		return nil, nil
	}
	cfg, warnings, err := config.Load(path)
	if err != nil {
		return nil, err // already "load config: …" or "FILE: [line:col] …"
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warden: warning: %v\n", w) // w names the file and position
	}
	rules, err := policy.CompileDeny(cfg.Approvals.Deny)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return rules, nil
}
