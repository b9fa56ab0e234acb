package web

import (
	"encoding/json"
	"net/url"
	"testing"
)

// FuzzElicitForm: whatever schema an MCP server sends and whatever a
// browser posts, building the form and the content never panics, and
// content that is accepted is a JSON object holding only the schema's
// fields.
func FuzzElicitForm(f *testing.F) {
	f.Add(`{"type":"object","properties":{"confirm":{"type":"boolean"},"note":{"type":"string"}},"required":["confirm"]}`, "f.confirm=on&f.note=ok")
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5}}}`, "f.n=3")
	f.Add(`{"type":"object","properties":{"size":{"type":"string","enum":["s","m"],"enumNames":["S","M"]}}}`, "f.size=m")
	f.Add(`{"properties":{"x":{"type":["string","null"]}}}`, "f.x=1")
	f.Add(`[]`, "")
	f.Fuzz(func(t *testing.T, schema, form string) {
		fields, err := formFields(json.RawMessage(schema))
		if err != nil {
			return
		}
		vals, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		content, err := formContent(fields, vals)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(content, &obj); err != nil || obj == nil {
			t.Fatalf("content %q is not a JSON object", content)
		}
		known := map[string]bool{}
		for _, fl := range fields {
			known[fl.Name] = true
		}
		for k := range obj {
			if !known[k] {
				t.Fatalf("content field %q is not in the schema", k)
			}
		}
	})
}
