package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/guardian"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/llm/openai"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
)

// RuleElicitation is the rule recorded on an MCP server's question.
const RuleElicitation = store.RuleElicitation

// mcpTools offers an mcpclient.Manager to the agent.
type mcpTools struct{ m *mcpclient.Manager }

// Tools implements agent.MCP.
func (t mcpTools) Tools(ctx context.Context, o owner.Owner) ([]agent.MCPTool, error) {
	ts, err := t.m.Tools(ctx, o)
	out := make([]agent.MCPTool, 0, len(ts))
	for _, x := range ts {
		out = append(out, agent.MCPTool{Server: x.Server, Name: x.Name, Description: x.Description, InputSchema: x.InputSchema})
	}
	return out, err
}

// Call implements agent.MCP.
func (t mcpTools) Call(ctx context.Context, o owner.Owner, server, tool string, args map[string]any) (agent.MCPResult, error) {
	r, err := t.m.Call(ctx, o, server, tool, args)
	return agent.MCPResult{Text: r.Text, IsError: r.IsError}, err
}

// Release implements agent.MCP.
func (t mcpTools) Release(ctx context.Context, o owner.Owner) { _ = t.m.CloseOwner(ctx, o) }

// brokerElicitor puts an MCP server's question to the owner's human as a
// request, through the runner: it waits in the owner's session queue,
// shows on the owner's surfaces, and ends accept (with the form's
// values), decline or cancel. mcpclient has already declined for owners
// nobody attends. The question and how it ended are audited by the
// store with the request (rule mcp.elicitation.*), so no answer reaches
// the server unless it is on record; an answer the store cannot record
// is never given, and the server hears cancel. The answer's content
// stays in the request row only.
type brokerElicitor struct {
	a *agents // its runner is bound after the agents are built
}

// Elicit implements mcpclient.Elicitor.
func (e brokerElicitor) Elicit(ctx context.Context, o owner.Owner, q mcpclient.Question) (mcpclient.Answer, error) {
	if e.a.runner == nil {
		return mcpclient.Answer{}, errors.New("elicit: no runner")
	}
	args, _ := json.Marshal(map[string]string{"message": q.Message, "url": q.URL})
	act := action.NewMCP(q.Server, "elicitation", args, false)
	bq := broker.Question{
		Owner: o, Action: act,
		Elicit: &store.Elicitation{Server: q.Server, Message: q.Message, Schema: q.Schema, URL: q.URL},
	}
	req, err := e.a.runner.Elicit(ctx, bq)
	if errors.Is(err, broker.ErrNoChannel) {
		return mcpclient.Answer{Action: mcpclient.ActionDecline}, nil
	}
	if err != nil {
		return mcpclient.Answer{}, fmt.Errorf("ask %s: %w", o, err)
	}
	outcome, content := broker.ElicitOutcome(req)
	a := mcpclient.Answer{Action: outcome}
	if outcome == broker.ElicitAccept && len(content) > 0 {
		if err := json.Unmarshal(content, &a.Content); err != nil {
			return mcpclient.Answer{}, fmt.Errorf("elicitation %s: content: %w", req.ID, err)
		}
	}
	return a, nil
}

// agents is what the agents need, built once from the config at start:
// the model (nil when none is configured), the guardian for mode smart,
// the MCP servers' client, and the agent itself.
type agents struct {
	model    llm.Client
	guardian gate.Guardian
	mcp      *mcpclient.Manager
	agent    *agent.Agent
	opts     agent.Options
	// runner is the host's (bound after the gate exists): the agent's
	// tools and the MCP servers' questions go through it.
	runner *runner.Runner
	// describe is the banner's line about them.
	describe string
}

// agentDeps are the parts of a host (or a chat's local gate) the agents
// are built on.
type agentDeps struct {
	cfg     *config.Config
	environ []string
	convs   store.Conversations
	logger  *slog.Logger
	sandbox *sandbox.Sandbox
	// dir is the stdio MCP servers' working directory ("" for the
	// process's own).
	dir string
}

// newModel builds the model client from llm:, with the API key read
// from the variable api_key_env names, in the environment the CLI
// passed in (never the process's own). No model configured is nil, nil.
func newModel(l config.LLM, environ []string, logger *slog.Logger) (llm.Client, string, error) {
	if !l.Configured() {
		return nil, "no model configured (set llm.base_url and llm.model to use agents)", nil
	}
	key, note := "", ""
	if l.APIKeyEnv != "" {
		var ok bool
		if key, ok = lookupEnv(environ, l.APIKeyEnv); !ok || key == "" {
			note = "; warning: " + l.APIKeyEnv + " is not set, so no API key is sent"
		}
	}
	c, err := openai.New(openai.Options{BaseURL: l.BaseURL, Model: l.Model, APIKey: key, Timeout: l.Timeout, MaxRetries: l.MaxRetries, Logger: logger})
	if err != nil {
		return nil, "", fmt.Errorf("model: %w", err)
	}
	return c, fmt.Sprintf("model %s at %s%s", l.Model, l.BaseURL, note), nil
}

// lookupEnv finds NAME in an environment list; the last one wins, as in
// the C library.
func lookupEnv(environ []string, name string) (string, bool) {
	val, found := "", false
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val, found = v, true
		}
	}
	return val, found
}

// newAgents builds the model, the guardian and the MCP client; bind
// then builds the agent on the runner (which needs the gate, which
// needs the guardian).
func newAgents(d agentDeps) (*agents, error) {
	a := &agents{}
	var err error
	var desc string
	if a.model, desc, err = newModel(d.cfg.LLM, d.environ, d.logger); err != nil {
		return nil, err
	}
	a.describe = desc
	if a.model != nil {
		// The guardian exists whenever a model does; the gate consults it
		// only while approvals.mode is smart (which may change on reload).
		g, err := guardian.New(guardian.Options{
			Client: a.model, Model: d.cfg.LLM.GuardianModel, MaxTokens: d.cfg.LLM.GuardianMaxTokens,
			Timeout: d.cfg.LLM.GuardianTimeout, Policy: d.cfg.Approvals.SmartPolicy,
			FailureThreshold: d.cfg.Approvals.SmartFailureThreshold, Logger: d.logger,
		})
		if err != nil {
			return nil, err
		}
		a.guardian = g
		a.describe += "; guardian ready for approvals.mode smart"
	}
	a.opts = agent.Options{Conversations: d.convs, MaxTurns: d.cfg.LLM.MaxTurns, Logger: d.logger}
	if a.model != nil {
		a.opts.Model = a.model
	}
	if len(d.cfg.MCP.Servers) > 0 {
		a.mcp = mcpclient.New(mcpclient.Options{
			Servers: d.cfg.MCP.Servers, Environ: d.environ, Passthrough: d.cfg.Tools.EnvPassthrough, Sandbox: d.sandbox, Dir: d.dir,
			Elicit: brokerElicitor{a}, ElicitTimeout: d.cfg.Approvals.Timeout, Logger: d.logger,
		})
		a.opts.MCP = mcpTools{a.mcp}
		a.describe += "; MCP servers: " + strings.Join(a.mcp.Servers(), ", ")
	}
	return a, nil
}

// bind builds the agent, running its tools (and the MCP servers'
// questions) through r.
func (a *agents) bind(r *runner.Runner) {
	a.runner = r
	a.opts.Exec = r
	a.agent = agent.New(a.opts)
}

// close ends the MCP sessions.
func (a *agents) close() {
	if a != nil && a.mcp != nil {
		_ = a.mcp.Close()
	}
}

// cronAgent is the agent for prompt jobs and tasks, or nil (an untyped
// nil: the scheduler and dispatcher then say no model is configured).
func (a *agents) cronAgent() cron.Agent {
	if a == nil || !a.agent.Configured() {
		return nil
	}
	return a.agent
}

// workerModel is the model that answers kanban workers' agents (the
// workerapi model verb), or nil when none is configured.
func (a *agents) workerModel() llm.Client {
	if a == nil {
		return nil
	}
	return a.model
}

// nonEmpty is the names that are not "".
func nonEmpty(names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}
