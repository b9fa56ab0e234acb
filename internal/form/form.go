// Package form reads the form an MCP server asks a human to fill in (an
// elicitation's requested schema: a flat object of primitive
// properties) and checks what the human typed against it. The console
// renders its fields as HTML inputs and warden chat asks them at the
// terminal; both convert answers with Field.Value, so a value one
// surface refuses the other refuses too.
//
// Everything here comes from an untrusted server: labels and texts are
// cleaned and clipped (Clean), and schemas beyond the bounds below are
// refused rather than trusted to be reasonable.
package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds on a requested form.
const (
	MaxLabel   = 200   // bytes of a field's title
	MaxHelp    = 1000  // bytes of a field's description
	MaxFields  = 40    // properties in one form
	MaxOptions = 200   // choices of one enum
	MaxSchema  = 64000 // bytes of schema JSON
	MaxValue   = 10000 // bytes of one typed string value
)

// Field is one input of a form, derived from one top-level property of
// the requested schema.
type Field struct {
	Name        string // the property name
	Label       string // its title, or its name
	Description string
	// Type is the JSON type the value is sent as: string, number,
	// integer or boolean.
	Type string
	// Input is the kind of control: text, email, url, date, number,
	// checkbox or select.
	Input    string
	Required bool
	Options  []Option
	// Min and Max bound numbers (as typed in the schema); MinLen and
	// MaxLen bound strings (0: none).
	Min, Max       *float64
	MinLen, MaxLen int
	// Format is a string's format (email, uri, date, date-time).
	Format string
	// Default prefills the input; Checked a checkbox.
	Default string
	Checked bool
	// Note explains a property shown differently than asked (an
	// unknown type shown as text).
	Note string
}

// Option is one choice of an enum.
type Option struct{ Value, Label string }

// Num renders a bound (Min, Max) as the schema gave it; "" for none.
func Num(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// Clean makes text from an MCP server or a model safe to show as
// plain text: control characters and bidirectional overrides (which
// can make text read differently than it is) become U+FFFD, newlines
// are kept only if multiline, and it is clipped to limit bytes. Escaping
// is left to the surface (html/template on the console).
func Clean(s string, limit int, multiline bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' && multiline, r == '\t':
			return r
		case r == '\r' && multiline:
			return -1
		case r == '\n', r == '\r':
			return ' '
		case unicode.IsControl(r), isBidi(r):
			return '\uFFFD'
		}
		return r
	}, s)
	return Clip(strings.TrimSpace(s), limit)
}

// isBidi reports the bidirectional formatting characters.
func isBidi(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// Clip cuts s to at most limit bytes on a character boundary,
// marking the cut.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := max(limit-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// schemaProp is the part of a property's schema the form uses.
type schemaProp struct {
	Type        json.RawMessage `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
	MinLength *int            `json:"minLength"`
	MaxLength *int            `json:"maxLength"`
	Default   json.RawMessage `json:"default"`
}

// Fields derives the form's fields from a requested schema, in the
// schema's property order. MCP elicitations ask for a flat object of
// primitive properties; a schema with nested objects or arrays, or one
// that is not an object schema at all, is refused with the reason.
func Fields(schema json.RawMessage) ([]Field, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, nil // nothing asked: accepting sends {}
	}
	if len(schema) > MaxSchema {
		return nil, fmt.Errorf("the requested form is too large (%d bytes)", len(schema))
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, errors.New("the requested form is not a JSON schema")
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the requested form is a %q, not an object of fields", top.Type)
	}
	names, props, err := orderedProps(top.Properties)
	if err != nil {
		return nil, err
	}
	if len(names) > MaxFields {
		return nil, fmt.Errorf("the requested form has %d fields, more than %d", len(names), MaxFields)
	}
	for _, r := range top.Required {
		if !slices.Contains(names, r) {
			return nil, fmt.Errorf("the requested form requires %q, which it does not define", Clean(r, MaxLabel, false))
		}
	}
	fields := make([]Field, 0, len(names))
	for i, name := range names {
		f, err := deriveField(name, props[i], slices.Contains(top.Required, name))
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// orderedProps decodes a properties object keeping its key order (a Go
// map would lose the order the server chose for its form).
func orderedProps(raw json.RawMessage) ([]string, []schemaProp, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	bad := errors.New("the requested form's properties are not an object")
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, bad
	}
	var (
		names []string
		props []schemaProp
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, bad
		}
		name, _ := t.(string)
		var p schemaProp
		if err := dec.Decode(&p); err != nil {
			return nil, nil, fmt.Errorf("the requested field %q is not a schema", Clean(name, MaxLabel, false))
		}
		if name == "" || slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("the requested form has an empty or repeated field name %q", Clean(name, MaxLabel, false))
		}
		names = append(names, name)
		props = append(props, p)
	}
	return names, props, nil
}

// deriveField derives one field from its property schema.
func deriveField(name string, p schemaProp, required bool) (Field, error) {
	label := Clean(name, MaxLabel, false)
	f := Field{
		Name: name, Label: label, Required: required,
		Description: Clean(p.Description, MaxHelp, true),
	}
	if t := Clean(p.Title, MaxLabel, false); t != "" {
		f.Label = t
	}
	var typ string
	if len(p.Type) > 0 && json.Unmarshal(p.Type, &typ) != nil {
		// A list of types ("type": ["string","null"]) is not a field
		// one input can fill unambiguously.
		return f, fmt.Errorf("field %q has a list of types, which a form cannot hold", label)
	}
	switch {
	case typ == "object" || typ == "array":
		return f, fmt.Errorf("field %q is a nested %s, which a form cannot hold", label, typ)
	case len(p.Enum) > 0 || len(p.OneOf) > 0:
		if typ != "" && typ != "string" {
			return f, fmt.Errorf("field %q is a %s enum; a form holds only string choices", label, Clean(typ, 40, false))
		}
		opts, err := enumOptions(p)
		if err != nil {
			return f, fmt.Errorf("field %q: %w", label, err)
		}
		f.Type, f.Input, f.Options = "string", "select", opts
		if s, ok := defaultString(p.Default); ok {
			f.Default = s
		}
	case typ == "string":
		f.Type, f.Input, f.Format = "string", "text", p.Format
		switch p.Format {
		case "email":
			f.Input = "email"
		case "uri":
			f.Input = "url"
		case "date":
			f.Input = "date"
		}
		if p.MinLength != nil {
			f.MinLen = max(*p.MinLength, 0)
		}
		if p.MaxLength != nil && *p.MaxLength > 0 {
			f.MaxLen = min(*p.MaxLength, MaxValue)
		}
		if s, ok := defaultString(p.Default); ok {
			f.Default = s
		}
	case typ == "number" || typ == "integer":
		f.Type, f.Input, f.Min, f.Max = typ, "number", p.Minimum, p.Maximum
		var n float64
		if len(p.Default) > 0 && json.Unmarshal(p.Default, &n) == nil {
			f.Default = strconv.FormatFloat(n, 'g', -1, 64)
		}
	case typ == "boolean":
		f.Type, f.Input = "boolean", "checkbox"
		var b bool
		if len(p.Default) > 0 && json.Unmarshal(p.Default, &b) == nil {
			f.Checked = b
		}
	default:
		// No type, or one MCP does not define: let the human type text
		// and send it as a string, saying so.
		f.Type, f.Input = "string", "text"
		f.Note = "The server gave no usable type for this field; it is sent as text."
		if typ != "" {
			f.Note = "The server asked for type “" + Clean(typ, 40, false) + "”; it is sent as text."
		}
	}
	return f, nil
}

// enumOptions lists an enum's choices: oneOf consts with their titles,
// or enum values with enumNames.
func enumOptions(p schemaProp) ([]Option, error) {
	var opts []Option
	add := func(v any, title string) error {
		s, ok := v.(string)
		if !ok {
			return errors.New("a choice is not a string")
		}
		label := Clean(title, MaxLabel, false)
		if label == "" {
			label = Clean(s, MaxLabel, false)
		}
		opts = append(opts, Option{Value: s, Label: label})
		return nil
	}
	if len(p.OneOf) > 0 {
		for _, o := range p.OneOf {
			if err := add(o.Const, o.Title); err != nil {
				return nil, err
			}
		}
	} else {
		for i, v := range p.Enum {
			title := ""
			if i < len(p.EnumNames) {
				title = p.EnumNames[i]
			}
			if err := add(v, title); err != nil {
				return nil, err
			}
		}
	}
	if len(opts) > MaxOptions {
		return nil, fmt.Errorf("%d choices, more than %d", len(opts), MaxOptions)
	}
	return opts, nil
}

func defaultString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Value converts one non-empty typed value, checked against the
// field: numbers parsed and bounded, choices among the options, string
// lengths and formats. A boolean is not typed in: each surface reads it
// its own way (a checkbox, y/n).
func (f Field) Value(s string) (any, error) {
	switch f.Type {
	case "number", "integer":
		s = strings.TrimSpace(s)
		var n float64
		if f.Type == "integer" {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a whole number", Clip(s, 40))
			}
			n = float64(i)
			if err := f.bounded(n); err != nil {
				return nil, err
			}
			return i, nil
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", Clip(s, 40))
		}
		if err := f.bounded(n); err != nil {
			return nil, err
		}
		return n, nil
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid text")
	}
	if len(s) > MaxValue {
		return nil, fmt.Errorf("longer than %d bytes", MaxValue)
	}
	if f.Input == "select" {
		if !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
			return nil, errors.New("not one of the choices")
		}
		return s, nil
	}
	n := utf8.RuneCountInString(s)
	if f.MinLen > 0 && n < f.MinLen {
		return nil, fmt.Errorf("at least %d characters", f.MinLen)
	}
	if f.MaxLen > 0 && n > f.MaxLen {
		return nil, fmt.Errorf("at most %d characters", f.MaxLen)
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return nil, errors.New("not an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return nil, errors.New("not an absolute URI")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, errors.New("not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, errors.New("not a date and time (like 2025-06-18T15:04:05Z)")
		}
	}
	return s, nil
}

// bounded checks a number against the field's minimum and maximum.
func (f Field) bounded(n float64) error {
	if f.Min != nil && n < *f.Min {
		return fmt.Errorf("at least %s", Num(f.Min))
	}
	if f.Max != nil && n > *f.Max {
		return fmt.Errorf("at most %s", Num(f.Max))
	}
	return nil
}
