package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/form"
)

// TestAskFieldKeys: a form field at the terminal takes single keys for
// choices (y/n, 1-9 then a-z for a list), a line for text, Enter to
// leave an optional field out, and echoes what it took.
func TestAskFieldKeys(t *testing.T) {
	level := form.Field{Name: "level", Label: "Level", Type: "string", Required: true,
		Options: []form.Option{{Value: "low"}, {Value: "mid"}, {Value: "high", Label: "High!"}}}
	many := form.Field{Name: "n", Label: "n", Type: "string"}
	for i := range 12 {
		many.Options = append(many.Options, form.Option{Value: fmt.Sprint("v", i)})
	}
	tests := []struct {
		name  string
		f     form.Field
		keys  string
		want  any
		ok    bool
		shown string
	}{
		{"option by number", level, "3", "high", true, "→ high"},
		{"bad key, then a number", level, "x2", "mid", true, "press 1-3"},
		{"required: Enter is no answer", level, "\r1", "low", true, "→ low"},
		{"option by letter past 9", many, "b", "v10", true, "→ v10"},
		{"optional list: Enter leaves it out", many, "\r", nil, false, "→ left out"},
		{"boolean", form.Field{Name: "ok", Label: "ok", Type: "boolean"}, "Y", true, true, "→ yes"},
		{"text with backspace", form.Field{Name: "why", Label: "why", Type: "string"}, "nox\x7fpe\r", "nope", true, "→ nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			c := &chat{in: newInput(strings.NewReader(tt.keys)), env: chatEnv{term: &terminal{w: &w}}}
			say := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
			v, ok, err := c.askField(t.Context(), tt.f, say, true)
			if err != nil || v != tt.want || ok != tt.ok || !strings.Contains(w.String(), tt.shown) {
				t.Errorf("got %v %v %v; shown %q", v, ok, err, w.String())
			}
		})
	}
}
