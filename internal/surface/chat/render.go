package chat

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
)

// Bounds on what a request's message shows.
const (
	// maxShown is the most of an action's payload a message shows. A
	// payload beyond it (or beyond the platform's room) is shown cut,
	// and the message offers no approval: nobody approves what they
	// cannot read. Deny and the console link remain.
	maxShown = 1500
	// maxElicitText bounds an MCP server's message shown.
	maxElicitText = 1500
	// maxReason bounds a denial's reason, in bytes.
	maxReason = 500
)

// visible renders s for people exactly as it will run (shell.Visible:
// every invisible or control character escaped, so nothing is hidden,
// overwritten or disguised in a chat client), with three or more
// backticks in a row, which would end a chat code block, escaped too.
// shell.Visible doubles a backslash that starts something looking like
// an escape, so \x60 typed by an agent cannot pass for a backtick.
func visible(s string) string {
	return ticks.ReplaceAllStringFunc(shell.Visible(s), func(run string) string { return strings.Repeat(`\x60`, len(run)) })
}

// ticks matches runs of backticks that would close a code fence.
var ticks = regexp.MustCompile("`{3,}")

// clean is untrusted text (a server's message, a name, a reason) made
// safe to show as plain text.
func clean(s string, limit int) string { return form.Clean(s, limit, false) }

// shown is what a message shows of a payload, and whether all of it
// fits.
func shown(s string, room int) (string, bool) {
	v := visible(s)
	limit := min(maxShown, room)
	if len(v) <= limit {
		return v, true
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + fmt.Sprintf("\n… %d more bytes not shown", len(v)-cut), false
}

// scopes are the approvals a request allows: none for an MCP server's
// question (it grants nothing), once only for what the analyser could
// not see into (a grant would cover whatever the text turns out to run;
// invariant 12), otherwise once, this session and always.
func scopes(r store.Request) []store.Scope {
	if r.Elicit != nil {
		return nil
	}
	if opaque(r) {
		return []store.Scope{store.Once}
	}
	return []store.Scope{store.Once, store.Session, store.Always}
}

// opaque reports whether the request's analysis says something could
// not be seen into: a dynamic execution, or a finding marked opaque.
func opaque(r store.Request) bool {
	for _, c := range r.Classes {
		if c == "exec.dynamic" {
			return true
		}
	}
	if len(r.Analysis) == 0 {
		return false
	}
	var a struct {
		Dynamic  bool `json:"dynamic"`
		Findings []struct {
			Opaque bool `json:"opaque"`
		} `json:"findings"`
	}
	if json.Unmarshal(r.Analysis, &a) != nil {
		return true // unreadable: assume the worst
	}
	if a.Dynamic {
		return true
	}
	for _, f := range a.Findings {
		if f.Opaque {
			return true
		}
	}
	return false
}

// view is a request's message: its details, and whether its payload is
// shown in full.
type view struct {
	blocks []Block
	full   bool
}

// describe builds the details of a request's message, without title
// and buttons.
func describe(r store.Request, room int, now time.Time) view {
	v := view{full: true}
	add := func(b ...Block) { v.blocks = append(v.blocks, b...) }
	payload := func(label, s string) {
		text, full := shown(s, room)
		v.full = v.full && full
		add(Field(label, ""), Code(text))
	}
	if e := r.Elicit; e != nil {
		add(Text(form.Clean(e.Message, maxElicitText, true)))
		if r.Action.Server != "" || r.Action.Tool != "" {
			add(Field("During", clean(r.Action.Server+" / "+r.Action.Tool, form.MaxLabel)))
		}
		if e.URL != "" {
			if u, ok := webLink(e.URL); ok {
				add(Link("Open", u))
			} else {
				add(Field("Link (not followed)", clean(e.URL, 300)))
			}
		} else if fs, err := form.Fields(e.Schema); err != nil {
			add(Field("Form", "cannot be shown ("+err.Error()+"); you can only decline it"))
		} else if len(fs) > 0 {
			var names []string
			for _, f := range fs {
				n := f.Label + " (" + kindOf(f)
				if f.Required {
					n += ", required"
				}
				names = append(names, n+")")
			}
			add(Field("Asks for", strings.Join(names, "; ")))
		}
	} else {
		switch a := r.Action; a.Kind {
		case action.Shell:
			payload("Command (as it will run)", a.Command)
		case action.Code:
			add(Field("Language", clean(a.Language, 40)))
			payload("Code", a.Source)
		case action.Write:
			text, full := shown(a.Path, room)
			v.full = v.full && full
			add(Field("Write", text))
			if a.Size > 0 {
				add(Field("Size", fmt.Sprintf("%d bytes", a.Size)))
			}
		case action.MCP:
			add(Field("Tool", clean(a.Server+" / "+a.Tool, form.MaxLabel)))
			payload("Arguments", string(a.Args))
		case action.Plugin:
			add(Field("Plugin", clean(a.Plugin, 100)), Field("Rule", clean(a.RuleKey, 200)))
			if a.Reason != "" {
				add(Field("Reason", clean(a.Reason, 500)))
			}
		default:
			payload(string(a.Kind), a.Payload())
		}
		if r.Action.Dir != "" {
			add(Field("In", visible(r.Action.Dir)))
		}
		if len(r.Classes) > 0 {
			var cs []string
			for _, cl := range explain.Classes(r.Classes, nil) {
				if cl.Description != "" {
					cs = append(cs, cl.Key+" ("+cl.Description+")")
				} else {
					cs = append(cs, clean(cl.Key, 100))
				}
			}
			add(Field("Why", strings.Join(cs, "; ")))
		}
	}
	add(Field("Asked by", clean(r.OwnerText, 300)))
	if r.State == store.Pending {
		left := r.Deadline.Sub(now).Round(time.Second)
		add(Field("Answer by", r.Deadline.UTC().Format("15:04:05 UTC")+fmt.Sprintf(" (%s from now); no answer is a denial", max(left, 0))))
	}
	if r.Notice != "" {
		add(Field("Note", r.Notice))
	}
	return v
}

// kindOf names a form field's kind for people.
func kindOf(f form.Field) string {
	switch f.Input {
	case "checkbox":
		return "yes/no"
	case "select":
		return "a choice"
	case "number":
		if f.Type == "integer" {
			return "a whole number"
		}
		return "a number"
	}
	if f.Format != "" {
		return f.Format
	}
	return "text"
}

// webLink accepts an absolute http(s) URL with a host and no user info.
func webLink(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 2000 || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	return u.String(), true
}

// pendingMessage is a pending request's message with its buttons.
func pendingMessage(r store.Request, caps Caps, link string, now time.Time) Message {
	v := describe(r, caps.MaxText-900, now)
	var m Message
	if r.Elicit != nil {
		m.Blocks = append([]Block{Title("❓ MCP server “" + clean(r.Elicit.Server, 100) + "” asks — request " + r.ID)}, v.blocks...)
		if r.Elicit.URL != "" {
			m.Buttons = []Button{{ID: makeID(verbDone, r.ID), Label: "Done", Style: StylePrimary}}
		} else if _, err := form.Fields(r.Elicit.Schema); err == nil {
			m.Buttons = []Button{{ID: makeID(verbFill, r.ID, 0), Label: "Fill in…", Style: StylePrimary}}
		}
		m.Buttons = append(m.Buttons, Button{ID: makeID(verbDecline, r.ID), Label: "Decline", Style: StyleDanger})
	} else {
		m.Blocks = append([]Block{Title("⚠️ Approval needed — request " + r.ID)}, v.blocks...)
		if !v.full {
			m.Blocks = append(m.Blocks, Text("Too long to show in full here, so it cannot be approved here: answer it in the console."))
		} else {
			for _, s := range scopes(r) {
				switch s {
				case store.Once:
					m.Buttons = append(m.Buttons, Button{ID: makeID(verbOnce, r.ID), Label: "Approve once", Style: StylePrimary})
				case store.Session:
					m.Buttons = append(m.Buttons, Button{ID: makeID(verbSession, r.ID), Label: "This session", Style: StyleSecondary})
				case store.Always:
					m.Buttons = append(m.Buttons, Button{ID: makeID(verbAlways, r.ID), Label: "Always", Style: StyleSecondary})
				}
			}
		}
		m.Buttons = append(m.Buttons, Button{ID: makeID(verbDeny, r.ID), Label: "Deny", Style: StyleDanger})
		if caps.ModalFields > 0 {
			m.Buttons = append(m.Buttons, Button{ID: makeID(verbReason, r.ID), Label: "Deny with reason…", Style: StyleDanger})
		} else {
			m.Blocks = append(m.Blocks, Text("To deny with a reason: /deny REASON"))
		}
	}
	if link != "" {
		m.Blocks = append(m.Blocks, Link("Console", link))
	}
	return m
}

// endedMessage is an ended request's message: how it ended, the same
// details, no buttons.
func endedMessage(r store.Request, caps Caps, now time.Time) Message {
	v := describe(r, caps.MaxText-900, now)
	return Message{Blocks: append([]Block{Title(endedTitle(r) + " — request " + r.ID)}, v.blocks...)}
}

// endedTitle says how a request ended.
func endedTitle(r store.Request) string {
	by := byText(r)
	if r.Elicit != nil {
		switch r.State {
		case store.Answered:
			return "✅ Answered" + by
		case store.Denied:
			return "⛔ Declined" + by
		case store.Expired:
			return "⌛ Expired: nobody answered in time; the server was told it was cancelled"
		case store.Withdrawn:
			return "↩️ Withdrawn (" + clean(r.Reason, 200) + "); the server was told it was cancelled"
		}
	}
	switch r.State {
	case store.Answered:
		return "✅ Approved " + scopeText(r.Scope) + by
	case store.Denied:
		s := "⛔ Denied" + by
		if r.Reason != "" {
			s += ": " + clean(r.Reason, maxReason)
		}
		return s
	case store.Expired:
		return "⌛ Expired: nobody answered in time; it was not run"
	case store.Withdrawn:
		return "↩️ Withdrawn (" + clean(r.Reason, 200) + "); it was not run"
	}
	return "Ended"
}

// lateText tells a human their answer came after the request ended. It
// never says "approved" (invariant 10).
func lateText(r store.Request) string {
	base := "Nothing pending — request " + r.ID
	switch r.State {
	case store.Expired:
		return base + " had expired; nobody answered in time, so it was not run. Your answer was not used."
	case store.Answered:
		if r.Elicit != nil {
			return base + " was already answered" + byText(r) + ". Your answer was not used."
		}
		return base + " was already answered" + byText(r) + " (" + scopeText(r.Scope) + "). Your answer was not used."
	case store.Denied:
		return base + " was already denied" + byText(r) + ". Your answer was not used."
	case store.Withdrawn:
		return base + " was withdrawn (" + clean(r.Reason, 200) + "). Your answer was not used."
	}
	return "Nothing pending for that request. Your answer was not used."
}

// answeredText confirms an answer that counted.
func answeredText(r store.Request) string {
	what := "request " + r.ID
	if r.Elicit != nil {
		if r.State == store.Denied {
			return "Declined " + what + "."
		}
		return "Sent your answer to " + what + "."
	}
	switch r.State {
	case store.Denied:
		s := "Denied " + what + "."
		if r.Reason != "" {
			s += " Reason given to the agent: " + clean(r.Reason, maxReason)
		}
		return s
	case store.Answered:
		return "Approved " + what + " " + scopeText(r.Scope) + "."
	}
	return lateText(r)
}

func scopeText(s store.Scope) string {
	switch s {
	case store.Session:
		return "for this session"
	case store.Always:
		return "always"
	}
	return "once"
}

func byText(r store.Request) string {
	if r.By == "" {
		return ""
	}
	s := " by " + clean(r.By, 200)
	if r.Surface != "" {
		s += " on " + clean(r.Surface, 40)
	}
	return s
}

// short names a request's action in one line, for lists.
func short(r store.Request) string {
	if r.Elicit != nil {
		return "question from MCP server “" + clean(r.Elicit.Server, 100) + "”"
	}
	s := visible(r.Action.Payload())
	if r.Action.Kind != action.Shell {
		s = string(r.Action.Kind) + " " + s
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return s
}
