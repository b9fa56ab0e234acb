package explain

import (
	"testing"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/shell"
)

// TestOf: a deny rule makes a verdict "denied", but never weakens a
// hardline or malformed one (it is still reported), and DecidedBy names
// what decided.
func TestOf(t *testing.T) {
	t.Parallel()
	deny, err := policy.CompileDeny([]string{"curl *", "rm -rf /*"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line, verdict, rule, decidedBy string
	}{
		{"ls -la", "safe", "", "nothing in the catalogue matched"},
		{"curl -s https://x.test", VerdictDenied, "curl *", "deny rule curl *"},
		{"rm -rf /", "hardline", "rm -rf /*", "delete.root"},
		{"echo 'x", "malformed", "", "malformed: "},
		{"git push --force", "dangerous", "", "git.force_push"},
	}
	for _, tt := range tests {
		e := Line(tt.line, deny)
		if e.Verdict != tt.verdict || e.DenyRule != tt.rule || e.Cmd != tt.line {
			t.Errorf("%q: verdict %q rule %q, want %q %q", tt.line, e.Verdict, e.DenyRule, tt.verdict, tt.rule)
		}
		if got := e.DecidedBy(); len(got) < len(tt.decidedBy) || got[:len(tt.decidedBy)] != tt.decidedBy {
			t.Errorf("%q: decided by %q, want %q…", tt.line, got, tt.decidedBy)
		}
	}
	if e := Line("curl -s x", nil); e.Verdict == VerdictDenied || e.DenyRule != "" {
		t.Errorf("no rules: %+v", e)
	}
}

// TestDecide: the gate's decision for an owner, with the attendance it
// had, and a missing gate is an error, not a silent allow.
func TestDecide(t *testing.T) {
	t.Parallel()
	p, err := gate.Compile(config.Default(), gate.Paths{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	cron, err := owner.Parse("cron:J1")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Decide(t.Context(), g, nil, cron, "rm -rf build")
	if err != nil {
		t.Fatal(err)
	}
	if e.Decision == nil || e.Decision.Verdict != gate.Deny || e.DecidedBy() != e.Decision.Rule || e.Verdict != "dangerous" {
		t.Fatalf("explanation %+v", e)
	}
	if got := e.Decision.Attendance(); got != "unattended: no answer channel" {
		t.Errorf("attendance %q", got)
	}
	if _, err := Decide(t.Context(), nil, nil, cron, "ls"); err == nil {
		t.Error("decided without a gate")
	}
}

// TestClasses: the catalogue first, then a finding's own words, then the
// bare key — never a class dropped.
func TestClasses(t *testing.T) {
	t.Parallel()
	got := Classes([]string{"delete.root", "x.custom", "y.unknown"},
		[]shell.Finding{{Class: "x.custom", Tier: shell.TierDangerous, Description: "custom"}})
	if len(got) != 3 || got[0].Description == "" || got[1].Description != "custom" || got[2].Key != "y.unknown" || got[2].Description != "" {
		t.Errorf("classes %+v", got)
	}
}
