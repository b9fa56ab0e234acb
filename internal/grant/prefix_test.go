package grant

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wardenhq/warden/internal/shell"
)

// TestDefaultPrefix: the proposal is the program, its verb and the
// options before the first operand, and none for a class whose prefix
// would grant the next, worse act.
func TestDefaultPrefix(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"systemctl restart nginx", "systemctl restart"},
		{"systemctl --user restart nginx", "systemctl --user"},
		{"pkill -9 node", "pkill -9"},
		{"rm -rf build", ""},
		{"ls -l", ""}, // not flagged: nothing to grant
		{"systemctl restart nginx && rm -rf build", ""},
	}
	for _, tt := range tests {
		a := shell.Analyze(tt.cmd)
		if got := DefaultPrefix(a); got != tt.want {
			t.Errorf("DefaultPrefix(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
		j, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultPrefixJSON(j); got != tt.want {
			t.Errorf("DefaultPrefixJSON(%q) = %q, want %q (the stored form disagrees)", tt.cmd, got, tt.want)
		}
	}
	if got := DefaultPrefixJSON(nil); got != "" {
		t.Errorf("no analysis: %q", got)
	}
	if got := DefaultPrefixJSON([]byte("{not json")); got != "" {
		t.Errorf("bad analysis: %q", got)
	}
}

// TestCheckPrefix: a pattern is accepted only if it covers the command
// itself, and never for a class that is not prefixable; a request
// without an analysis gets no prefix grant.
func TestCheckPrefix(t *testing.T) {
	restart, _ := json.Marshal(shell.Analyze("systemctl restart nginx"))
	rm, _ := json.Marshal(shell.Analyze("rm -rf build"))
	tests := []struct {
		analysis []byte
		pattern  string
		ok       bool
	}{
		{restart, "", true},
		{restart, "systemctl", true},
		{restart, "systemctl restart *", true},
		{restart, "git push", false},
		{restart, "systemctl stop", false},
		{restart, "*", false},
		{rm, "", false},
		{rm, "rm -rf", false},
		{rm, "rm", false},
		{nil, "", false},
		{[]byte("{not json"), "systemctl", false},
	}
	for _, tt := range tests {
		err := CheckPrefixJSON(tt.analysis, tt.pattern)
		if (err == nil) != tt.ok {
			t.Errorf("CheckPrefixJSON(%.30s, %q) = %v, want ok %v", tt.analysis, tt.pattern, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrNotCovered) {
			t.Errorf("CheckPrefixJSON(%.30s, %q) = %v, not ErrNotCovered", tt.analysis, tt.pattern, err)
		}
	}
}

func TestPrefixPattern(t *testing.T) {
	for in, want := range map[string]string{"git push": "git push *", "git push *": "git push *"} {
		if got := PrefixPattern(in); got != want {
			t.Errorf("PrefixPattern(%q) = %q, want %q", in, got, want)
		}
	}
}
