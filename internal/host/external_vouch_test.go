package host

import (
	"testing"

	"github.com/wardenhq/warden/internal/gate"
)

// TestVouched: only an allow a person stands behind is vouched; a safe
// command, a bypass or a reviewer model's approval is not (a hook then
// leaves the agent's own guard in place).
func TestVouched(t *testing.T) {
	check := func(rule, request string, want bool) {
		t.Helper()
		if got := vouched(rule, request); got != want {
			t.Errorf("vouched(%s, %q) = %v, want %v", rule, request, got, want)
		}
	}
	check(gate.RuleHuman, "01Q", true)
	for _, rule := range []string{gate.RuleGrantExact, gate.RuleGrantPrefix, gate.RuleGrantClass, gate.RuleToolAllow} {
		check(rule, "", true)
	}
	for _, rule := range []string{gate.RuleSafe, gate.RuleModeOff, gate.RuleProcessYolo, gate.RuleSessionYolo,
		gate.RuleContainer, gate.RuleGuardianApprove, gate.RuleUnattendedMode} {
		check(rule, "", false)
	}
}
