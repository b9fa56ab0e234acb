package form

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	fields, err := Fields(json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"integer","minimum":1,"maximum":5},
		"x":{"type":"number"},
		"size":{"type":"string","enum":["s","m"]},
		"mail":{"type":"string","format":"email"},
		"day":{"type":"string","format":"date"},
		"short":{"type":"string","maxLength":3}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Field{}
	for _, f := range fields {
		by[f.Name] = f
	}
	if names := fmt.Sprintln(len(fields), fields[0].Name, fields[0].Required); names != "6 n true\n" {
		t.Fatalf("fields in schema order: %s", names)
	}
	tests := []struct {
		field, in string
		want      any
		err       string
	}{
		{"n", "3", int64(3), ""},
		{"n", "9", nil, "at most 5"},
		{"n", "2.5", nil, "not a whole number"},
		{"x", "2.5", 2.5, ""},
		{"x", "Inf", nil, "not a number"},
		{"size", "m", "m", ""},
		{"size", "xl", nil, "not one of the choices"},
		{"mail", "a@example.com", "a@example.com", ""},
		{"mail", "nope", nil, "not an email"},
		{"day", "2026-11-29", "2026-11-29", ""},
		{"day", "29/11", nil, "not a date"},
		{"short", "abcd", nil, "at most 3"},
	}
	for _, tc := range tests {
		got, err := by[tc.field].Value(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s=%q: %v, want error %q", tc.field, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s=%q: %#v %v, want %#v", tc.field, tc.in, got, err, tc.want)
		}
	}
}

func TestFieldsRefuses(t *testing.T) {
	for _, schema := range []string{
		`{"type":"array"}`,
		`{"properties":{"o":{"type":"object"}}}`,
		`{"properties":{"a":{"type":["string","null"]}}}`,
		`{"properties":{"a":{"type":"string"}},"required":["b"]}`,
		`not json`,
	} {
		if _, err := Fields(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: accepted", schema)
		}
	}
}

func TestClean(t *testing.T) {
	if got := Clean("a\u202Eb\x07c\nd", 100, false); got != "a\uFFFDb\uFFFDc d" {
		t.Errorf("Clean = %q", got)
	}
	if got := Clip(strings.Repeat("é", 10), 5); got != "é…" {
		t.Errorf("Clip = %q", got)
	}
}
