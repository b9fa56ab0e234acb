package ccperm

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/wardenhq/warden/internal/config"
)

// FuzzTranslate: any rule list translates without panic, every rule is
// accounted for, and the fragment is always a valid warden config (a
// rule warden cannot express is reported, never written broken).
func FuzzTranslate(f *testing.F) {
	if b, err := os.ReadFile("testdata/settings.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"permissions":{"deny":["Bash([)","Read(//)","mcp__a__[","Edit(~)"],"allow":["Bash(*)","Bash( :*)"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rules, err := Parse(b)
		if err != nil {
			return
		}
		res := Translate(rules, env)
		if len(res.Notes) != len(rules) {
			t.Fatalf("%d notes for %d rules", len(res.Notes), len(rules))
		}
		frag := res.Fragment("fuzz.json")
		if _, _, err := config.Parse(frag, "fragment.yaml"); err != nil {
			rj, _ := json.Marshal(rules)
			t.Fatalf("invalid fragment from %s: %v\n%s", rj, err, frag)
		}
	})
}
