package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// errNoModel is -q without a model configured.
var errNoModel = errors.New("no model configured: set llm.base_url and llm.model in the config file (see docs/agents.md)")

// ask sends one line to the agent as the session and prints what it
// does: its words on stdout, its tool calls and what became of them on
// stderr. A dangerous call stops at the usual prompt.
func (c *chat) ask(ctx context.Context, message string) error {
	if !c.local.Agent.Configured() {
		fmt.Fprintf(c.env.stderr, "warden: %s; !COMMAND still works\n", errNoModel)
		return nil
	}
	_, err := c.local.Agent.Run(ctx, agent.Run{Conversation: c.key, Dir: c.env.dir, Stream: true, Emit: func(e agent.Event) { c.show(ctx, e) }}, message)
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
	if !c.local.Agent.Configured() {
		return errNoModel
	}
	res, err := c.local.Agent.Run(ctx, agent.Run{Conversation: c.key, Dir: c.env.dir, Stream: true, Emit: func(e agent.Event) { c.show(ctx, e) }}, message)
	c.endLine()
	if err != nil {
		if errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRefused) {
			return fmt.Errorf("chat: %w", err)
		}
		return err
	}
	if res.Capped {
		fmt.Fprintf(c.env.stderr, "warden: %s\n", res.Reply)
	}
	return nil
}

// show prints one event of the agent's run. The agent's words stream
// to stdout as they come; anything else starts on a line of its own.
func (c *chat) show(ctx context.Context, e agent.Event) {
	out, errw := c.env.stdout, c.env.stderr
	if e.Kind == agent.Text && e.Delta {
		fmt.Fprint(out, sanitizeLines(e.Text))
		c.midLine = !strings.HasSuffix(e.Text, "\n")
		return
	}
	c.endLine()
	switch e.Kind {
	case agent.Text:
		fmt.Fprintln(out, sanitizeLines(e.Text))
	case agent.ToolCall:
		fmt.Fprintf(errw, "→ %s %s\n", e.Tool, clipLine(e.Args, 200))
	case agent.Pending:
		// The terminal asks through its answer channel (broker.Prompter).
	case agent.Blocked:
		fmt.Fprintf(errw, "warden: blocked: %s\n", sanitize(e.Text))
	case agent.ToolResult:
		fmt.Fprintf(errw, "  %s\n", strings.ReplaceAll(clipLines(e.Text, 12), "\n", "\n  "))
	case agent.Notice:
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

// elicitPrompt asks an MCP server's question at the terminal: the
// message, each field of the form (Enter leaves an optional one out),
// then [a]ccept or [d]ecline. Bad values are asked again; end of input,
// Ctrl-C or the deadline cancel.
func (c *chat) elicitPrompt(ctx context.Context, r store.Request) {
	w := c.env.term.w
	el := r.Elicit
	fmt.Fprintf(w, "\nwarden: MCP server %s asks (request %s):\n  %s\n", sanitize(el.Server), r.ID, strings.ReplaceAll(sanitizeLines(el.Message), "\n", "\n  "))
	ctx, cancel := context.WithDeadline(ctx, r.Deadline)
	defer cancel()
	content := map[string]any{}
	fields, err := form.Fields(el.Schema)
	if err != nil {
		fmt.Fprintf(w, "  (this form cannot be filled in here: %v; only decline is possible)\n", err)
		fields = nil
	}
	if el.URL != "" {
		fmt.Fprintf(w, "  open: %s\n", sanitize(el.URL))
	}
	for _, f := range fields {
		for {
			fmt.Fprintf(w, "  %s: ", fieldPrompt(f))
			line, err := c.in.line(ctx)
			if err != nil {
				c.resolveElicit(ctx, r, broker.Answer{Reason: "no answer"}, w)
				return
			}
			v, ok, msg := parseField(f, strings.TrimSpace(line))
			if msg != "" {
				fmt.Fprintf(w, "  %s\n", msg)
				continue
			}
			if ok {
				content[f.Name] = v
			}
			break
		}
	}
	for {
		fmt.Fprint(w, "  [a]ccept [d]ecline: ")
		line, err := c.in.line(ctx)
		if err != nil {
			c.resolveElicit(ctx, r, broker.Answer{Reason: "no answer"}, w)
			return
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "accept":
			if fields == nil && el.URL == "" && len(el.Schema) > 0 {
				fmt.Fprintln(w, "  this form cannot be accepted here")
				continue
			}
			b, _ := json.Marshal(content)
			c.resolveElicit(ctx, r, broker.Answer{Approve: true, Content: b}, w)
			return
		case "d", "decline":
			c.resolveElicit(ctx, r, broker.Answer{}, w)
			return
		}
	}
}

func (c *chat) resolveElicit(ctx context.Context, r store.Request, a broker.Answer, w io.Writer) {
	a.By, a.Surface = c.env.user, terminalChannel{}.Surface()
	if !a.Approve && a.Reason != "" {
		// Nobody answered: let the deadline or the withdrawal cancel it.
		fmt.Fprintln(w, "\n  no answer: the server is told the question was cancelled")
		return
	}
	ended, err := c.local.Broker.Resolve(context.WithoutCancel(ctx), r.ID, a)
	switch {
	case errors.Is(err, broker.ErrNotPending):
		fmt.Fprintln(w, "  "+localapi.LateMessage(ended))
		c.local.Broker.Wake(context.WithoutCancel(ctx), r.ID)
	case err != nil:
		fmt.Fprintf(w, "  could not record the answer: %v\n", err)
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
