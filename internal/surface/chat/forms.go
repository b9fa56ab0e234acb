package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// maxForms bounds the forms being filled in at once.
const maxForms = 256

// maxChoiceButtons is how many choices a question shows as buttons.
const maxChoiceButtons = 12

// formKey is one user's form of one request.
type formKey struct{ request, user string }

// formRun is a form being filled in: the values given so far, and in
// question-by-question mode the field being asked.
type formRun struct {
	req    store.Request
	conv   Conv
	user   User
	fields []form.Field
	values map[string]any // by field name
	texts  map[int]string // as typed, by field index (to prefill)
	idx    int            // question mode: the field being asked
}

// fill starts (or continues at page) filling in an elicitation's form.
func (c *Core) fill(ctx context.Context, resp Responder, conv Conv, u User, req store.Request, page int) {
	if req.Elicit.URL != "" {
		c.private(ctx, resp, "Open the link in the message, then press Done (or Decline).")
		return
	}
	fields, err := form.Fields(req.Elicit.Schema)
	if err != nil {
		c.private(ctx, resp, "This form cannot be shown ("+err.Error()+"); you can only decline it.")
		return
	}
	if len(fields) == 0 {
		c.answer(ctx, resp, req, surface.Answer{Approve: true, Scope: store.Once, Content: json.RawMessage(`{}`), By: c.identity(u)}, false)
		return
	}
	fr, ok := c.formRunFor(req, conv, u, fields)
	if !ok {
		c.private(ctx, resp, "Too many forms are being filled in right now; try again in a moment.")
		return
	}
	if c.caps.ModalFields > 0 {
		pages := (len(fields) + c.caps.ModalFields - 1) / c.caps.ModalFields
		page = min(max(page, 0), pages-1)
		err := resp.Form(ctx, c.formPage(fr, page, pages))
		if err == nil {
			return
		}
		if err != ErrNoForm {
			c.log.WarnContext(ctx, "open form", "id", req.ID, "err", err)
			c.private(ctx, resp, "The form could not be opened; try again.")
			return
		}
	}
	// Question by question, in the conversation.
	c.mu.Lock()
	fr.idx = 0
	c.mu.Unlock()
	c.private(ctx, resp, "Answer the questions below (reply to each); /cancel stops, and the question stays pending.")
	c.ask(ctx, fr)
}

func (c *Core) formRunFor(req store.Request, conv Conv, u User, fields []form.Field) (*formRun, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := formKey{req.ID, u.ID}
	if fr, ok := c.forms[k]; ok {
		return fr, true
	}
	if len(c.forms) >= maxForms {
		return nil, false
	}
	fr := &formRun{req: req, conv: conv, user: u, fields: fields, values: map[string]any{}, texts: map[int]string{}}
	c.forms[k] = fr
	return fr, true
}

// dropForms forgets the forms of an ended request.
func (c *Core) dropForms(request string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.forms {
		if k.request == request {
			delete(c.forms, k)
		}
	}
}

// formPage is page (of pages) of fr's form as a modal.
func (c *Core) formPage(fr *formRun, page, pages int) Form {
	per := c.caps.ModalFields
	from, to := page*per, min((page+1)*per, len(fr.fields))
	title := "MCP server " + clean(fr.req.Elicit.Server, 40)
	if pages > 1 {
		title = fmt.Sprintf("%s (%d/%d)", title, page+1, pages)
	}
	f := Form{ID: makeID(verbPage, fr.req.ID, page), Title: title, Submit: "Send"}
	if page < pages-1 {
		f.Submit = "Next"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := from; i < to; i++ {
		f.Inputs = append(f.Inputs, c.inputOf(fr.fields[i], i, fr.texts))
	}
	return f
}

// inputOf is field i as a form input, prefilled with what was typed.
func (c *Core) inputOf(fd form.Field, i int, texts map[int]string) Input {
	in := Input{ID: fmt.Sprintf("f%d", i), Kind: InputText, Label: fd.Label, Help: fd.Description,
		Required: fd.Required && fd.Type != "boolean", Hint: hintOf(fd), Value: fd.Default, MaxLen: fd.MaxLen}
	if fd.Type == "boolean" {
		in.Value = ""
		if fd.Checked {
			in.Value = "yes"
		}
	}
	if c.caps.TypedInputs {
		switch {
		case fd.Type == "boolean":
			in.Kind = InputCheckbox
			in.Value = fmt.Sprint(fd.Checked)
		case fd.Input == "select" && len(fd.Options) <= 100:
			in.Kind = InputChoice
			for _, o := range fd.Options {
				in.Options = append(in.Options, Option{Value: o.Value, Label: o.Label})
			}
		}
	}
	if t, ok := texts[i]; ok {
		in.Value = t
	}
	if in.Kind == InputText && fd.Description != "" && len(fd.Description) > 200 {
		in.Multiline = true
	}
	return in
}

// hintOf says what a field takes, for people.
func hintOf(f form.Field) string {
	switch {
	case f.Type == "boolean":
		return "yes or no"
	case f.Input == "select":
		var ls []string
		for _, o := range f.Options {
			ls = append(ls, o.Label)
		}
		return form.Clip("one of: "+strings.Join(ls, ", "), 100)
	case f.Type == "integer", f.Type == "number":
		h := kindOf(f)
		if f.Min != nil || f.Max != nil {
			h += " (" + form.Num(f.Min) + "…" + form.Num(f.Max) + ")"
		}
		return h
	case f.Format == "date":
		return "YYYY-MM-DD"
	case f.Format == "date-time":
		return "like 2025-06-18T15:04:05Z"
	case f.Format != "":
		return "an " + f.Format
	}
	if !f.Required {
		return "optional"
	}
	return ""
}

// value reads one typed answer for f: (value, set, error). A blank
// optional answer is not set; a blank required one is an error.
func value(f form.Field, raw string) (any, bool, error) {
	if f.Type == "boolean" {
		s := strings.ToLower(strings.TrimSpace(raw))
		switch s {
		case "":
			return f.Checked, true, nil
		case "yes", "y", "true", "on", "1":
			return true, true, nil
		case "no", "n", "false", "off", "0":
			return false, true, nil
		}
		return nil, false, fmt.Errorf("%s: answer yes or no", f.Label)
	}
	if strings.TrimSpace(raw) == "" {
		if f.Required {
			return nil, false, fmt.Errorf("%s is required", f.Label)
		}
		return nil, false, nil
	}
	if f.Input == "select" {
		// A choice may be typed by its value or its label.
		t := strings.TrimSpace(raw)
		for _, o := range f.Options {
			if o.Value == t || strings.EqualFold(o.Label, t) || strings.EqualFold(o.Value, t) {
				raw = o.Value
				break
			}
		}
	}
	v, err := f.Value(raw)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", f.Label, err)
	}
	return v, true, nil
}

// Submit implements Handler: a deny-with-reason form, or a page of an
// elicitation's form.
func (c *Core) Submit(ctx context.Context, s Submission) {
	a, ok := parseID(s.Form)
	if !ok || (a.verb != verbReason && a.verb != verbPage) {
		c.private(ctx, s.Respond, "That form is not warden's; nothing was done.")
		return
	}
	req, ok := c.clicked(ctx, s.Respond, s.Conv, s.From, a.request)
	if !ok {
		return
	}
	if _, ok := c.answerable(ctx, s.Respond, s.Conv, s.From, req); !ok {
		return
	}
	by := c.identity(s.From)
	if a.verb == verbReason {
		c.answer(ctx, s.Respond, req, surface.Answer{By: by, Reason: cleanReason(s.Values["reason"])}, true)
		return
	}
	if req.Elicit == nil || req.Elicit.URL != "" {
		c.private(ctx, s.Respond, "Request "+req.ID+" has no form to fill in.")
		return
	}
	fields, err := form.Fields(req.Elicit.Schema)
	if err != nil {
		c.private(ctx, s.Respond, "This form cannot be used ("+err.Error()+"); you can only decline it.")
		return
	}
	fr, ok := c.formRunFor(req, s.Conv, s.From, fields)
	if !ok {
		c.private(ctx, s.Respond, "Too many forms are being filled in right now; try again in a moment.")
		return
	}
	per := max(c.caps.ModalFields, 1)
	pages := (len(fields) + per - 1) / per
	page := a.arg
	if page >= pages {
		c.private(ctx, s.Respond, "That form page does not exist; nothing was done.")
		return
	}
	errs := map[string]string{}
	c.mu.Lock()
	for i := page * per; i < min((page+1)*per, len(fields)); i++ {
		id := fmt.Sprintf("f%d", i)
		raw := s.Values[id]
		fr.texts[i] = raw
		v, set, err := value(fields[i], raw)
		switch {
		case err != nil:
			errs[id] = err.Error()
		case set:
			fr.values[fields[i].Name] = v
		default:
			delete(fr.values, fields[i].Name)
		}
	}
	c.mu.Unlock()
	if len(errs) > 0 {
		var lines []string
		for i := page * per; i < min((page+1)*per, len(fields)); i++ {
			if e, ok := errs[fmt.Sprintf("f%d", i)]; ok {
				lines = append(lines, e)
			}
		}
		retry := Message{Blocks: []Block{Text("Not sent: " + strings.Join(lines, "; ") + ".")},
			Buttons: []Button{{ID: makeID(verbFill, req.ID, page), Label: "Fill in again", Style: StylePrimary}}}
		if err := s.Respond.Invalid(ctx, errs, retry); err != nil {
			c.log.WarnContext(ctx, "refuse form values", "id", req.ID, "err", err)
		}
		return
	}
	if page < pages-1 {
		next := Message{Blocks: []Block{Text(fmt.Sprintf("Saved page %d of %d.", page+1, pages))},
			Buttons: []Button{{ID: makeID(verbFill, req.ID, page+1), Label: "Continue", Style: StylePrimary}}}
		if err := s.Respond.Private(ctx, next); err != nil {
			c.log.WarnContext(ctx, "continue form", "id", req.ID, "err", err)
		}
		return
	}
	c.sendForm(ctx, s.Respond, fr, by)
}

// sendForm answers the request with the form's values.
func (c *Core) sendForm(ctx context.Context, resp Responder, fr *formRun, by surface.Identity) {
	c.mu.Lock()
	content, err := json.Marshal(fr.values)
	c.mu.Unlock()
	if err != nil {
		c.private(ctx, resp, "Not sent: "+err.Error()+".")
		return
	}
	c.answer(ctx, resp, fr.req, surface.Answer{Approve: true, Scope: store.Once, Content: content, By: by}, false)
}

// cleanReason bounds a denial's reason and makes it one line of plain
// text: it is shown to the agent and written to the audit log.
func cleanReason(s string) string { return form.Clean(s, maxReason, false) }
