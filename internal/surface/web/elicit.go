package web

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

	"github.com/wardenhq/warden/internal/store"
)

// Bounds on what an MCP server's elicitation may put on a card. The
// server is untrusted: its text is clipped rather than trusted to be
// reasonable, and a schema beyond these bounds is not rendered.
const (
	maxElicitMessage = 4000  // bytes of the server's message shown
	maxElicitLabel   = 200   // bytes of a field's title
	maxElicitHelp    = 1000  // bytes of a field's description
	maxElicitFields  = 40    // properties in one form
	maxElicitOptions = 200   // choices of one enum
	maxElicitSchema  = 64000 // bytes of schema JSON
	maxElicitValue   = 10000 // bytes of one typed string value
	maxElicitURL     = 2000  // bytes of a URL-mode link
)

// fieldPrefix prefixes a property's form field name, so a property
// called "csrf" or "decision" cannot collide with the card's own fields.
const fieldPrefix = "f."

// elicitView is an elicitation as its card shows it.
type elicitView struct {
	Server  string
	Message string
	// URL is a URL-mode elicitation's link (http or https only); BadURL
	// is the server's text when it was not a link the console follows.
	URL, BadURL string
	Fields      []formField
	// Refused says why the requested form cannot be shown; the card
	// then offers only Decline.
	Refused string
}

// formField is one input of an elicitation form, derived from one
// top-level property of the requested schema.
type formField struct {
	Name        string // the property name
	Label       string // its title, or its name
	Description string
	// Type is the JSON type the value is sent as: string, number,
	// integer or boolean.
	Type string
	// Input is the HTML control: text, email, url, date, number,
	// checkbox or select.
	Input    string
	Required bool
	Options  []formOption
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

// formOption is one choice of an enum.
type formOption struct{ Value, Label string }

// InputName is the field's name in the posted form.
func (f formField) InputName() string { return fieldPrefix + f.Name }

// Step is the number input's step.
func (f formField) Step() string {
	if f.Type == "integer" {
		return "1"
	}
	return "any"
}

// MinAttr and MaxAttr render the bounds for the number input.
func (f formField) MinAttr() string { return numAttr(f.Min) }

// MaxAttr renders the upper bound for the number input.
func (f formField) MaxAttr() string { return numAttr(f.Max) }

func numAttr(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// viewElicit turns an elicitation into what its card shows.
func viewElicit(e *store.Elicitation) *elicitView {
	v := &elicitView{Server: untrusted(e.Server, maxElicitLabel, false), Message: untrusted(e.Message, maxElicitMessage, true)}
	if e.URL != "" {
		if u, ok := webLink(e.URL); ok {
			v.URL = u
		} else {
			v.BadURL = untrusted(e.URL, maxElicitURL, false)
		}
		return v
	}
	fields, err := formFields(e.Schema)
	if err != nil {
		v.Refused = err.Error()
		return v
	}
	v.Fields = fields
	return v
}

// webLink accepts an absolute http(s) URL with a host: anything else (a
// javascript: or file: URL, a relative path) is not made a link.
func webLink(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > maxElicitURL || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	return u.String(), true
}

// untrusted makes text from an MCP server or a model safe to show as
// plain text: control characters and bidirectional overrides (which
// can make text read differently than it is) become U+FFFD, newlines
// are kept only if multiline, and it is clipped to limit bytes. Escaping
// is left to html/template.
func untrusted(s string, limit int, multiline bool) string {
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
	return clipText(strings.TrimSpace(s), limit)
}

// isBidi reports the bidirectional formatting characters.
func isBidi(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// clipText cuts s to at most limit bytes on a character boundary,
// marking the cut.
func clipText(s string, limit int) string {
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

// formFields derives the form's fields from a requested schema, in the
// schema's property order. MCP elicitations ask for a flat object of
// primitive properties; a schema with nested objects or arrays, or one
// that is not an object schema at all, is refused with the reason.
func formFields(schema json.RawMessage) ([]formField, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, nil // nothing asked: accepting sends {}
	}
	if len(schema) > maxElicitSchema {
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
	if len(names) > maxElicitFields {
		return nil, fmt.Errorf("the requested form has %d fields, more than %d", len(names), maxElicitFields)
	}
	for _, r := range top.Required {
		if !slices.Contains(names, r) {
			return nil, fmt.Errorf("the requested form requires %q, which it does not define", untrusted(r, maxElicitLabel, false))
		}
	}
	fields := make([]formField, 0, len(names))
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
			return nil, nil, fmt.Errorf("the requested field %q is not a schema", untrusted(name, maxElicitLabel, false))
		}
		if name == "" || slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("the requested form has an empty or repeated field name %q", untrusted(name, maxElicitLabel, false))
		}
		names = append(names, name)
		props = append(props, p)
	}
	return names, props, nil
}

// deriveField derives one field from its property schema.
func deriveField(name string, p schemaProp, required bool) (formField, error) {
	label := untrusted(name, maxElicitLabel, false)
	f := formField{
		Name: name, Label: label, Required: required,
		Description: untrusted(p.Description, maxElicitHelp, true),
	}
	if t := untrusted(p.Title, maxElicitLabel, false); t != "" {
		f.Label = t
	}
	var typ string
	if len(p.Type) > 0 && json.Unmarshal(p.Type, &typ) != nil {
		// A list of types ("type": ["string","null"]) is not a field
		// one input can fill unambiguously.
		return f, fmt.Errorf("field %q has a list of types, which the console cannot show", label)
	}
	switch {
	case typ == "object" || typ == "array":
		return f, fmt.Errorf("field %q is a nested %s, which the console cannot show", label, typ)
	case len(p.Enum) > 0 || len(p.OneOf) > 0:
		if typ != "" && typ != "string" {
			return f, fmt.Errorf("field %q is a %s enum; the console shows only string choices", label, untrusted(typ, 40, false))
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
			f.MaxLen = min(*p.MaxLength, maxElicitValue)
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
			f.Note = "The server asked for type “" + untrusted(typ, 40, false) + "”; it is sent as text."
		}
	}
	return f, nil
}

// enumOptions lists an enum's choices: oneOf consts with their titles,
// or enum values with enumNames.
func enumOptions(p schemaProp) ([]formOption, error) {
	var opts []formOption
	add := func(v any, title string) error {
		s, ok := v.(string)
		if !ok {
			return errors.New("a choice is not a string")
		}
		label := untrusted(title, maxElicitLabel, false)
		if label == "" {
			label = untrusted(s, maxElicitLabel, false)
		}
		opts = append(opts, formOption{Value: s, Label: label})
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
	if len(opts) > maxElicitOptions {
		return nil, fmt.Errorf("%d choices, more than %d", len(opts), maxElicitOptions)
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

// formError is a human's input the form cannot accept; its text is
// shown to them.
type formError struct{ msg string }

func (e formError) Error() string { return e.msg }

// formContent builds an accepted elicitation's content from the posted
// form, typed and checked against the fields derived from the stored
// schema (never from anything the browser says about the form):
// numbers are parsed and bounded, booleans come from a checkbox's
// presence, choices must be among the enum's, and required fields must
// be filled. An empty optional field is left out.
func formContent(fields []formField, form url.Values) (json.RawMessage, error) {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		raw, present := form[f.InputName()]
		s := ""
		if present && len(raw) > 0 {
			s = raw[0]
		}
		if f.Type == "boolean" {
			// An unchecked checkbox is not posted at all: absent is false.
			out[f.Name] = present && (s == "true" || s == "on")
			continue
		}
		if strings.TrimSpace(s) == "" {
			if f.Required {
				return nil, formError{f.Label + " is required"}
			}
			continue
		}
		v, err := fieldValue(f, s)
		if err != nil {
			return nil, formError{f.Label + ": " + err.Error()}
		}
		out[f.Name] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode content: %w", err)
	}
	return b, nil
}

// fieldValue converts one non-empty typed value.
func fieldValue(f formField, s string) (any, error) {
	switch f.Type {
	case "number", "integer":
		s = strings.TrimSpace(s)
		var n float64
		if f.Type == "integer" {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a whole number", clipText(s, 40))
			}
			n = float64(i)
			if err := bounded(f, n); err != nil {
				return nil, err
			}
			return i, nil
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", clipText(s, 40))
		}
		if err := bounded(f, n); err != nil {
			return nil, err
		}
		return n, nil
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid text")
	}
	if len(s) > maxElicitValue {
		return nil, fmt.Errorf("longer than %d bytes", maxElicitValue)
	}
	if f.Input == "select" {
		if !slices.ContainsFunc(f.Options, func(o formOption) bool { return o.Value == s }) {
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
func bounded(f formField, n float64) error {
	if f.Min != nil && n < *f.Min {
		return fmt.Errorf("at least %s", numAttr(f.Min))
	}
	if f.Max != nil && n > *f.Max {
		return fmt.Errorf("at most %s", numAttr(f.Max))
	}
	return nil
}
