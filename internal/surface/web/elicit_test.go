package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/store"
)

// fieldSummary is what a test compares of a derived field.
func fieldSummary(f formField) string {
	s := fmt.Sprintf("%s:%s/%s", f.Name, f.Type, f.Input)
	if f.Required {
		s += " req"
	}
	if f.Label != f.Name {
		s += " label=" + f.Label
	}
	if f.Min != nil || f.Max != nil {
		s += " [" + f.MinAttr() + "," + f.MaxAttr() + "]"
	}
	if f.MinLen > 0 || f.MaxLen > 0 {
		s += fmt.Sprintf(" len=%d..%d", f.MinLen, f.MaxLen)
	}
	for _, o := range f.Options {
		s += " " + o.Value + "=" + o.Label
	}
	if f.Default != "" {
		s += " default=" + f.Default
	}
	if f.Checked {
		s += " checked"
	}
	if f.Note != "" {
		s += " (note)"
	}
	return s
}

func TestFormFields(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []string
		wantErr string
	}{
		{"no schema", ``, nil, ""},
		{"no properties", `{"type":"object"}`, nil, ""},
		{"string", `{"type":"object","properties":{"name":{"type":"string","title":"Your name","minLength":2,"maxLength":30,"default":"ana"}},"required":["name"]}`,
			[]string{"name:string/text req label=Your name len=2..30 default=ana"}, ""},
		{"formats", `{"type":"object","properties":{"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"}}}`,
			[]string{"e:string/email", "u:string/url", "d:string/date", "t:string/text"}, ""},
		{"numbers keep schema order", `{"type":"object","properties":{"z":{"type":"integer","minimum":1,"maximum":10},"a":{"type":"number","minimum":-0.5,"default":2.5}}}`,
			[]string{"z:integer/number [1,10]", "a:number/number [-0.5,] default=2.5"}, ""},
		{"boolean", `{"type":"object","properties":{"ok":{"type":"boolean","title":"Really?","default":true}}}`,
			[]string{"ok:boolean/checkbox label=Really? checked"}, ""},
		{"enum with names", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}}}`,
			[]string{"c:string/select r=Red g=Green"}, ""},
		{"oneOf consts", `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"}}}`,
			[]string{"c:string/select s=Small l=Large default=l"}, ""},
		{"enum without type", `{"type":"object","properties":{"c":{"enum":["x"]}}}`, []string{"c:string/select x=x"}, ""},
		{"unknown type as text", `{"type":"object","properties":{"w":{"type":"weird"},"n":{}}}`,
			[]string{"w:string/text (note)", "n:string/text (note)"}, ""},
		{"control characters in labels", `{"type":"object","properties":{"a":{"type":"string","title":"x\u202Ey\u0007"}}}`,
			[]string{"a:string/text label=x\uFFFDy\uFFFD"}, ""},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{}}}}`, nil, "nested object"},
		{"array", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`, nil, "nested array"},
		{"type list", `{"type":"object","properties":{"l":{"type":["string","null"]}}}`, nil, "list of types"},
		{"number enum", `{"type":"object","properties":{"n":{"type":"number","enum":[1,2]}}}`, nil, "only string choices"},
		{"non-string choice", `{"type":"object","properties":{"n":{"enum":["a",2]}}}`, nil, "not a string"},
		{"not an object schema", `{"type":"string"}`, nil, "not an object"},
		{"not JSON", `{"type":`, nil, "not a JSON schema"},
		{"properties not an object", `{"type":"object","properties":[1]}`, nil, "not an object"},
		{"required undefined", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, nil, `requires "b"`},
		{"too many fields", manyFields(maxElicitFields + 1), nil, "more than"},
		{"too large", `{"type":"object","description":"` + strings.Repeat("x", maxElicitSchema) + `"}`, nil, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fields, err := formFields(json.RawMessage(tc.schema))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fields {
				got = append(got, fieldSummary(f))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("fields\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func manyFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%d":{"type":"string"}`, i)
	}
	b.WriteString("}}")
	return b.String()
}

// testSchema has one field of every kind the form converts.
const testSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","minLength":2,"maxLength":5},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"day":{"type":"string","format":"date"},
	"count":{"type":"integer","minimum":1,"maximum":10},
	"ratio":{"type":"number","maximum":1},
	"ok":{"type":"boolean"},
	"color":{"type":"string","enum":["red","green"]},
	"other":{}
},"required":["name","count","ok"]}`

func TestFormContent(t *testing.T) {
	fields, err := formFields(json.RawMessage(testSchema))
	must(t, err, "fields")
	base := url.Values{"f.name": {"ana"}, "f.count": {"3"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<absent>" {
				v.Del(kv[i])
				continue
			}
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	tests := []struct {
		name    string
		form    url.Values
		want    string
		wantErr string
	}{
		{"minimal: unchecked is false, empty optional left out", base, `{"count":3,"name":"ana","ok":false}`, ""},
		{"all types", with("f.email", "a@example.com", "f.site", "https://example.com/x", "f.day", "2025-06-18",
			"f.ratio", "0.25", "f.ok", "true", "f.color", "green", "f.other", "free text"),
			`{"color":"green","count":3,"day":"2025-06-18","email":"a@example.com","name":"ana","ok":true,"other":"free text","ratio":0.25,"site":"https://example.com/x"}`, ""},
		{"checkbox on", with("f.ok", "on"), `{"count":3,"name":"ana","ok":true}`, ""},
		{"fields not in the schema are ignored", with("f.extra", "x", "decision", "accept"), `{"count":3,"name":"ana","ok":false}`, ""},
		{"required missing", with("f.name", "<absent>"), "", "Name is required"},
		{"required blank", with("f.count", "  "), "", "count is required"},
		{"bad integer", with("f.count", "3.5"), "", `count: "3.5" is not a whole number`},
		{"integer below minimum", with("f.count", "0"), "", "count: at least 1"},
		{"integer above maximum", with("f.count", "11"), "", "count: at most 10"},
		{"bad number", with("f.ratio", "abc"), "", `ratio: "abc" is not a number`},
		{"infinite number", with("f.ratio", "-Inf"), "", "is not a number"},
		{"number above maximum", with("f.ratio", "1.5"), "", "ratio: at most 1"},
		{"enum not a choice", with("f.color", "blue"), "", "color: not one of the choices"},
		{"too short", with("f.name", "a"), "", "Name: at least 2 characters"},
		{"too long", with("f.name", "ananas"), "", "Name: at most 5 characters"},
		{"bad email", with("f.email", "Ana <a@example.com>"), "", "email: not an email address"},
		{"bad uri", with("f.site", "example.com"), "", "site: not an absolute URI"},
		{"bad date", with("f.day", "18/06/2025"), "", "day: not a date"},
		{"oversize value", with("f.other", strings.Repeat("x", maxElicitValue+1)), "", "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := formContent(fields, tc.form)
			if tc.wantErr != "" {
				var fe formError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				} else if !errors.As(err, &fe) {
					t.Fatalf("err %T is not a formError (it would not be shown to the human)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("content %s\nwant    %s", got, tc.want)
			}
		})
	}
}

func TestViewElicit(t *testing.T) {
	long := strings.Repeat("é", maxElicitMessage) // two bytes each
	tests := []struct {
		name  string
		e     store.Elicitation
		check func(t *testing.T, v *elicitView)
	}{
		{"message neutralised", store.Elicitation{Server: "fi\u202Eles\n", Message: "line 1\r\nline 2\x1b[31m\u2066"}, func(t *testing.T, v *elicitView) {
			if v.Server != "fi\uFFFDles" || v.Message != "line 1\nline 2\uFFFD[31m\uFFFD" {
				t.Errorf("server %q message %q", v.Server, v.Message)
			}
		}},
		{"oversize message clipped", store.Elicitation{Server: "s", Message: long}, func(t *testing.T, v *elicitView) {
			if len(v.Message) > maxElicitMessage || !strings.HasSuffix(v.Message, "…") || !strings.HasPrefix(v.Message, "éé") {
				t.Errorf("clipped message: %d bytes, ends %q", len(v.Message), v.Message[len(v.Message)-8:])
			}
		}},
		{"url mode", store.Elicitation{Server: "s", URL: "https://example.com/auth?x=1"}, func(t *testing.T, v *elicitView) {
			if v.URL != "https://example.com/auth?x=1" || v.BadURL != "" || v.Fields != nil {
				t.Errorf("%+v", v)
			}
		}},
		{"javascript url not linked", store.Elicitation{Server: "s", URL: "javascript:alert(1)"}, func(t *testing.T, v *elicitView) {
			if v.URL != "" || v.BadURL != "javascript:alert(1)" {
				t.Errorf("%+v", v)
			}
		}},
		{"url with credentials not linked", store.Elicitation{Server: "s", URL: "https://u:p@example.com/"}, func(t *testing.T, v *elicitView) {
			if v.URL != "" {
				t.Errorf("%+v", v)
			}
		}},
		{"unrenderable schema refused", store.Elicitation{Server: "s", Schema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object"}}}`)}, func(t *testing.T, v *elicitView) {
			if !strings.Contains(v.Refused, "nested object") || v.Fields != nil {
				t.Errorf("%+v", v)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, viewElicit(&tc.e)) })
	}
}

func TestAbbreviate(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"0123456789abcdefghij", 10, "01234\n… 10 bytes not shown …\nfghij"},
		{"ééééé", 4, "é\n… 6 bytes not shown …\né"},
	}
	for _, tc := range tests {
		if got := abbreviate(tc.in, tc.limit); got != tc.want {
			t.Errorf("abbreviate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}
