package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/store"
)

// Bounds on what an MCP server's elicitation may put on a card. The
// server is untrusted: its text is clipped rather than trusted to be
// reasonable, and a schema beyond these bounds is not rendered.
const (
	maxElicitMessage = 4000 // bytes of the server's message shown
	maxElicitURL     = 2000 // bytes of a URL-mode link
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

// formField is one input of an elicitation form (internal/form) with
// what its HTML control needs.
type formField struct{ form.Field }

// formFields derives the form's fields from a requested schema.
func formFields(schema json.RawMessage) ([]formField, error) {
	fs, err := form.Fields(schema)
	if err != nil {
		return nil, err
	}
	out := make([]formField, len(fs))
	for i, f := range fs {
		out[i] = formField{f}
	}
	return out, nil
}

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
func (f formField) MinAttr() string { return form.Num(f.Min) }

// MaxAttr renders the upper bound for the number input.
func (f formField) MaxAttr() string { return form.Num(f.Max) }

// viewElicit turns an elicitation into what its card shows.
func viewElicit(e *store.Elicitation) *elicitView {
	v := &elicitView{Server: form.Clean(e.Server, form.MaxLabel, false), Message: form.Clean(e.Message, maxElicitMessage, true)}
	if e.URL != "" {
		if u, ok := webLink(e.URL); ok {
			v.URL = u
		} else {
			v.BadURL = form.Clean(e.URL, maxElicitURL, false)
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
		v, err := f.Value(s)
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
