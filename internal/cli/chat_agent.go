package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// errNoModel is -q without a model configured.
var errNoModel = errors.New("no model configured: set llm.base_url and llm.model in the config file (see docs/agents.md)")

// ask sends one line to the agent as the session and prints what it
// does: its words on stdout, its tool calls and what became of them on
// stderr. A dangerous call stops at the usual prompt.
func (c *chat) ask(ctx context.Context, message string) error {
	if !c.host.Agent() {
		fmt.Fprintf(c.env.stderr, "warden: %s; !COMMAND still works\n", errNoModel)
		return nil
	}
	_, err := c.host.Converse(ctx, c.owner, c.key, message, func(e surface.Step) { c.show(ctx, e) })
	c.endLine()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil {
		fmt.Fprintf(c.env.stderr, "warden: %v\n", err)
	}
	return nil
}

// query is chat -q: one message, no answer channel, then exit.
func (c *chat) query(ctx context.Context, message string) error {
	if !c.host.Agent() {
		return errNoModel
	}
	res, err := c.host.Converse(ctx, c.owner, c.key, message, func(e surface.Step) { c.show(ctx, e) })
	c.endLine()
	if err != nil {
		if errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRefused) {
			return fmt.Errorf("chat: %w", err)
		}
		return err
	}
	if res.Capped {
		fmt.Fprintf(c.env.stderr, "warden: %s\n", res.Text)
	}
	return nil
}

// show prints one event of the agent's run. The agent's words stream
// to stdout as they come; anything else starts on a line of its own.
func (c *chat) show(ctx context.Context, e surface.Step) {
	out, errw := c.env.stdout, c.env.stderr
	if e.Kind == surface.StepText && e.Delta {
		fmt.Fprint(out, sanitizeLines(e.Text))
		c.midLine = !strings.HasSuffix(e.Text, "\n")
		return
	}
	c.endLine()
	switch e.Kind {
	case surface.StepText:
		fmt.Fprintln(out, sanitizeLines(e.Text))
	case surface.StepToolCall:
		fmt.Fprintf(errw, "→ %s %s\n", e.Tool, clipLine(e.Args, 200))
	case surface.StepPending:
		// The terminal asks through its answer channel (broker.Prompter).
	case surface.StepBlocked:
		fmt.Fprintf(errw, "warden: blocked: %s\n", sanitize(e.Text))
	case surface.StepToolResult:
		fmt.Fprintf(errw, "  %s\n", strings.ReplaceAll(clipLines(e.Text, 12), "\n", "\n  "))
	case surface.StepNotice:
		fmt.Fprintf(errw, "warden: %s\n", sanitize(e.Text))
	}
}

// endLine ends streamed words that did not end their line.
func (c *chat) endLine() {
	if c.midLine {
		fmt.Fprintln(c.env.stdout)
		c.midLine = false
	}
}

// sanitizeLines is sanitize line by line: the text keeps its line
// breaks and loses every other control character.
func sanitizeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = sanitize(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// clipLine folds s onto one line of at most n characters.
func clipLine(s string, n int) string {
	s = sanitize(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// clipLines keeps the first n lines of s.
func clipLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(sanitizeLines(s), "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… %d more lines", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// elicitPrompt asks an MCP server's question at the terminal with the
// approval prompt's input model: single keys for every choice — y/n for
// a yes-or-no field, a number or letter for one of a list, a/d to
// accept or decline — and a typed line only for free text; Enter leaves
// an optional field out. Each answer is echoed as it was taken. Bad
// values are asked again; end of input, Ctrl-C or the deadline cancel.
func (c *chat) elicitPrompt(ctx context.Context, r store.Request) {
	t := c.env.term
	nl, raw := "\n", false
	if t.raw != nil {
		if restore, err := t.raw(); err == nil {
			defer restore()
			nl, raw = "\r\n", true
		}
	}
	w := t.w
	el := r.Elicit
	say := func(format string, args ...any) {
		fmt.Fprint(w, strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", nl))
	}
	say("\nwarden: MCP server %s asks (request %s):\n  %s\n", sanitize(el.Server), r.ID, strings.ReplaceAll(sanitizeLines(el.Message), "\n", "\n  "))
	ctx, cancel := context.WithDeadline(ctx, r.Deadline)
	defer cancel()
	content := map[string]any{}
	fields, err := form.Fields(el.Schema)
	if err != nil {
		say("  (this form cannot be filled in here: %v; only decline is possible)\n", err)
		fields = nil
	}
	if el.URL != "" {
		say("  open: %s\n", sanitize(el.URL))
	}
	cancelled := func() { c.resolveElicit(ctx, r, surface.Answer{Reason: "no answer"}, w, nl) }
	for _, f := range fields {
		v, ok, err := c.askField(ctx, f, say, raw)
		if err != nil {
			cancelled()
			return
		}
		if ok {
			content[f.Name] = v
		}
	}
	for {
		say("  [a]ccept [d]ecline: ")
		choice, err := c.in.choose(ctx, map[byte]string{'a': "a", 'd': "d"}, "", func() { say("\n  press a or d: ") })
		if err != nil {
			cancelled()
			return
		}
		if choice == "a" {
			if fields == nil && el.URL == "" && len(el.Schema) > 0 {
				say("accept\n  this form cannot be accepted here\n")
				continue
			}
			say("→ accepted\n")
			b, _ := json.Marshal(content)
			c.resolveElicit(ctx, r, surface.Answer{Approve: true, Content: b}, w, nl)
			return
		}
		say("→ declined\n")
		c.resolveElicit(ctx, r, surface.Answer{}, w, nl)
		return
	}
}

// maxKeyOptions is how many options a single key can pick (1-9, a-z).
const maxKeyOptions = 35

// optionKey is the key of option i: 1-9, then a-z.
func optionKey(i int) byte {
	if i < 9 {
		return byte('1' + i)
	}
	return byte('a' + i - 9)
}

// askField asks one form field and echoes what was taken. ok is false
// for an optional field left out.
func (c *chat) askField(ctx context.Context, f form.Field, say func(string, ...any), raw bool) (any, bool, error) {
	enter := ""
	if !f.Required {
		enter = "\n" // Enter leaves it out
	}
	switch {
	case f.Type == "boolean":
		say("  %s [y/n]%s: ", fieldPrompt(f), optional(f))
		v, err := c.in.choose(ctx, map[byte]string{'y': "yes", 'n': "no"}, enter, func() { say("\n  press y or n: ") })
		if err != nil {
			return nil, false, err
		}
		if v == "\n" {
			say("→ left out\n")
			return nil, false, nil
		}
		say("→ %s\n", v)
		return v == "yes", true, nil
	case len(f.Options) > 0 && len(f.Options) <= maxKeyOptions:
		name := f.Name
		if f.Label != f.Name {
			name = f.Label + " (" + f.Name + ")"
		}
		if f.Required {
			name += " *"
		}
		say("  %s%s:\n", sanitize(name), optional(f))
		keys := map[byte]string{}
		for i, o := range f.Options {
			k := optionKey(i)
			keys[k] = o.Value
			label := o.Value
			if o.Label != "" && o.Label != o.Value {
				label = o.Label + " (" + o.Value + ")"
			}
			say("    %c) %s\n", k, sanitize(label))
		}
		say("  press %c-%c: ", optionKey(0), optionKey(len(f.Options)-1))
		v, err := c.in.choose(ctx, keys, enter, func() { say("\n  press %c-%c: ", optionKey(0), optionKey(len(f.Options)-1)) })
		if err != nil {
			return nil, false, err
		}
		if v == "\n" {
			say("→ left out\n")
			return nil, false, nil
		}
		say("→ %s\n", sanitize(v))
		val, ok, msg := parseField(f, v)
		if msg != "" {
			return nil, false, errors.New(msg)
		}
		return val, ok, nil
	}
	for {
		say("  %s%s: ", fieldPrompt(f), optional(f))
		line, err := c.in.text(ctx, c.env.term.w, raw)
		if err != nil {
			return nil, false, err
		}
		if raw {
			say("\n")
		}
		v, ok, msg := parseField(f, strings.TrimSpace(line))
		if msg != "" {
			say("  %s\n", msg)
			continue
		}
		if !ok {
			say("  → left out\n")
		} else {
			say("  → %s\n", sanitize(fmt.Sprint(v)))
		}
		return v, ok, nil
	}
}

// optional marks a field Enter may leave out.
func optional(f form.Field) string {
	if f.Required {
		return ""
	}
	return " (Enter: leave out)"
}

func (c *chat) resolveElicit(ctx context.Context, r store.Request, a surface.Answer, w io.Writer, nl string) {
	a.By = c.identity()
	if !a.Approve && a.Reason != "" {
		// Nobody answered: let the deadline or the withdrawal cancel it.
		fmt.Fprint(w, nl+"  no answer: the server is told the question was cancelled"+nl)
		return
	}
	ended, err := c.host.Answer(ctx, r.ID, a)
	switch {
	case errors.Is(err, surface.ErrNotPending):
		fmt.Fprint(w, "  "+localapi.LateMessage(ended)+nl)
	case err != nil:
		fmt.Fprintf(w, "  could not record the answer: %v%s", err, nl)
	}
}

// fieldPrompt is how a form field is asked at the terminal.
func fieldPrompt(f form.Field) string {
	p := f.Name
	if f.Label != f.Name {
		p = f.Label + " (" + f.Name + ")"
	}
	switch {
	case len(f.Options) > 0:
		vals := make([]string, len(f.Options))
		for i, o := range f.Options {
			vals[i] = o.Value
		}
		p += " [" + strings.Join(vals, "/") + "]"
	case f.Type == "boolean":
		p += " [y/n]"
	case f.Type != "string":
		p += " (" + f.Type + ")"
	case f.Format != "":
		p += " (" + f.Format + ")"
	}
	if f.Required {
		p += " *"
	}
	return sanitize(p)
}

// parseField reads a typed answer: y/n for a boolean, else the form's
// own conversion (form.Field.Value, as the console's). ok is false for
// an empty optional field; msg says what is wrong.
func parseField(f form.Field, s string) (v any, ok bool, msg string) {
	if s == "" {
		if f.Required {
			return nil, false, "required"
		}
		return nil, false, ""
	}
	if f.Type == "boolean" {
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, true, ""
		case "n", "no", "false":
			return false, true, ""
		}
		return nil, false, "answer y or n"
	}
	v, err := f.Value(s)
	if err != nil {
		return nil, false, sanitize(err.Error())
	}
	return v, true, ""
}
