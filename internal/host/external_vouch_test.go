package host

import (
	"testing"

	"github.com/wardenhq/warden/internal/gate"
)

// TestVouched: only an allow a person stands behind is vouched; a safe
// command, a bypass or a reviewer model's approval is not (a hook then
// leaves the agent's own guard in place).
func TestVouched(t *testing.T) {
	for _, tt := range []struct {
		rule, request string
		want          bool
	}{
		{gate.RuleHuman, "01Q", true},
		{gate.RuleGrantExact, "", true},
		{gate.RuleGrantPrefix, "", true},
		{gate.RuleGrantClass, "", true},
		{gate.RuleToolAllow, "", true},
		{gate.RuleSafe, "", false},
		{gate.RuleModeOff, "", false},
		{gate.RuleProcessYolo, "", false},
		{gate.RuleSessionYolo, "", false},
		{gate.RuleContainer, "", false},
		{gate.RuleGuardianApprove, "", false},
		{gate.RuleUnattendedMode, "", false},
	} {
		if got := vouched(tt.rule, tt.request); got != tt.want {
			t.Errorf("vouched(%s, %q) = %v, want %v", tt.rule, tt.request, got, tt.want)
		}
	}
}
