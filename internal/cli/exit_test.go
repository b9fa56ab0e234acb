package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitSafe},
		{exitStatus(ExitDangerous), ExitDangerous},
		{fmt.Errorf("wrapped: %w", exitStatus(ExitBlocked)), ExitBlocked},
		{usageError{errors.New("bad flag")}, ExitUsage},
		{fmt.Errorf("run: %w", context.Canceled), ExitInterrupted},
		{errors.New("config unreadable"), ExitBlocked},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	for v, want := range map[gate.Verdict]int{gate.Allow: 0, gate.Ask: 1, gate.Deny: 2, "": 2, "new-verdict": 2} {
		if got := decisionExit(v); got != want {
			t.Errorf("decisionExit(%q) = %d, want %d", v, got, want)
		}
	}
	for v, want := range map[string]int{"safe": 0, "dangerous": 1, "hardline": 2, "malformed": 2, "denied": 2, "new-verdict": 2} {
		if got := verdictExit(v); got != want {
			t.Errorf("verdictExit(%q) = %d, want %d", v, got, want)
		}
	}
}
