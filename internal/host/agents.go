package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// RuleElicitation is the rule recorded on an MCP server's question.
const RuleElicitation = "mcp.elicitation"

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

// brokerElicitor puts an MCP server's question to the owner's human as a
// request: it waits in the owner's session queue, shows on the owner's
// surfaces, and ends accept (with the form's values), decline or cancel.
// mcpclient has already declined for owners nobody attends.
type brokerElicitor struct{ b *broker.Broker }

// Elicit implements mcpclient.Elicitor.
func (e brokerElicitor) Elicit(ctx context.Context, o owner.Owner, q mcpclient.Question) (mcpclient.Answer, error) {
	req, err := e.b.Ask(ctx, broker.Question{
		Owner: o, Action: action.NewMCP(q.Server, "elicitation", nil, false), Rule: RuleElicitation,
		Elicit: &store.Elicitation{Server: q.Server, Message: q.Message, Schema: q.Schema, URL: q.URL},
	})
	if errors.Is(err, broker.ErrNoChannel) {
		return mcpclient.Answer{Action: mcpclient.ActionDecline}, nil
	}
	if err != nil {
		return mcpclient.Answer{}, fmt.Errorf("ask %s: %w", o, err)
	}
	act, content := broker.ElicitOutcome(req)
	a := mcpclient.Answer{Action: act}
	if act == broker.ElicitAccept && len(content) > 0 {
		if err := json.Unmarshal(content, &a.Content); err != nil {
			return mcpclient.Answer{}, fmt.Errorf("elicitation %s: content: %w", req.ID, err)
		}
	}
	return a, nil
}
