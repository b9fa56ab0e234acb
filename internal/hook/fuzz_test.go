package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/internal/action"
)

// allowAll is a decider that allows whatever reaches it: the fuzzer
// checks that nothing unreadable reaches it.
type allowAll struct{ calls int }

func (a *allowAll) Decide(context.Context, Call) (Answer, error) {
	a.calls++
	return Answer{Verdict: Allow}, nil
}

// FuzzHandle feeds arbitrary payloads to every protocol: no panic; a
// payload that does not parse is denied without reaching the decider; a
// call that reaches it carries a valid action.
func FuzzHandle(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}}`))
	f.Add([]byte(`{"version":1,"agent":"a","session":"s","action":{"kind":"write","path":"rel"}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, p := range []Protocol{ClaudeCode{}, Codex{}, Gemini{}, Generic{}} {
			c, perr := p.Parse(payload)
			d := &allowAll{}
			res := Handle(context.Background(), p, bytes.NewReader(payload), d, Options{})
			switch {
			case perr != nil:
				if d.calls != 0 || res.Exit != 2 {
					t.Fatalf("%T: unparsable payload reached the decider (%d) or exited %d: %q", p, d.calls, res.Exit, payload)
				}
			case c.Pass:
				if d.calls != 0 {
					t.Fatalf("%T: a passed tool reached the decider", p)
				}
			default:
				for _, act := range append([]action.Action{c.Action}, c.Extra...) {
					if err := act.Validate(); err != nil {
						t.Fatalf("%T: parsed an invalid action %+v: %v", p, act, err)
					}
				}
				if d.calls != 1+len(c.Extra) {
					t.Fatalf("%T: %d decider calls for %d actions", p, d.calls, 1+len(c.Extra))
				}
				if c.Agent == "" || c.Session == "" {
					t.Fatalf("%T: a call without agent or session: %+v", p, c)
				}
			}
		}
	})
}
