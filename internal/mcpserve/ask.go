package mcpserve

// mcp.ask_client: a call's question goes to the MCP client as well as
// the console.
//
// The SDK's multi-round-trip (SEP-2322) path carries it: the first call
// starts the host run in the background and, once the host asks,
// returns InputRequests{"approve": form} with a signed RequestState. A
// client on protocol 2026-07-28 or later fulfils the form and calls
// again with InputResponses and the state; for a client on an older
// protocol the SDK's server shim sends elicitation/create itself and
// calls the handler again the same way. Either way the second round
// checks the state, answers the host's request as the client's human
// did, and returns the run's outcome. The console can answer first: the
// host keeps the first answer, and the late one gets 409 and is ignored.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

const (
	// inputKey names warden's one input request in InputRequests.
	inputKey = "approve"
	// answeredInClient marks a request the client's user answered.
	answeredInClient = "client"
	// maxAsks bounds the questions open at the client at once; past it a
	// call waits for the console alone, as without ask_client.
	maxAsks = 64
	// maxReason caps the reason a client's user gives.
	maxReason = 1000
	// maxShown caps program text shown in the question.
	maxShown = 2000
	// answerTimeout bounds one approve or deny sent to the host.
	answerTimeout = 10 * time.Second
	// stateVersion prefixes a RequestState, so a format change is a bad
	// state rather than a misread one.
	stateVersion = "w1"
)

// Lifetimes of a question open at the client: kept past the host's
// deadline by askGrace (the host's denial is still there to return),
// never longer than maxAskWait. Variables so tests can shorten them.
var (
	askGrace   = time.Minute
	maxAskWait = 24 * time.Hour
)

// job is a host run started by a call that put its question to the
// client, waiting for the call that brings the answer.
type job struct {
	id     string // the host's request id
	tool   string // the tool called, bound into the state
	cancel context.CancelFunc
	done   chan struct{} // closed when out is set
	out    outcome
	timer  *time.Timer
}

// asks holds the jobs whose question is open at the client, by request
// id, and the key their states are signed with.
type asks struct {
	key []byte

	mu   sync.Mutex
	jobs map[string]*job
}

func newAsks() (*asks, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	return &asks{key: key, jobs: make(map[string]*job)}, nil
}

// put keeps j until its answer comes or ttl passes; then it is dropped
// and its run cancelled, which withdraws the host's question (or stops a
// run nobody will read). It is false when maxAsks are open.
func (a *asks) put(j *job, ttl time.Duration) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.jobs) >= maxAsks || a.jobs[j.id] != nil {
		return false
	}
	a.jobs[j.id] = j
	j.timer = time.AfterFunc(ttl, func() {
		if a.claim(j.id) == j {
			j.cancel()
		}
	})
	return true
}

// claim removes and returns the job of request id, or nil; only one
// caller gets it, so a question is answered once.
func (a *asks) claim(id string) *job {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.jobs[id]
	if j == nil {
		return nil
	}
	delete(a.jobs, id)
	j.timer.Stop()
	return j
}

// open is how many questions are open at the client.
func (a *asks) open() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.jobs)
}

// mac is the state's signature: the request id bound to the tool, so a
// state cannot be replayed on another tool's call.
func (a *asks) mac(tool, id string) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(stateVersion + "\x00" + tool + "\x00" + id))
	return m.Sum(nil)
}

// sign returns the RequestState for request id asked by tool.
func (a *asks) sign(tool, id string) string {
	enc := base64.RawURLEncoding
	return stateVersion + "." + enc.EncodeToString([]byte(id)) + "." + enc.EncodeToString(a.mac(tool, id))
}

// verify returns the request id of a state this process signed for
// tool. The client holds the state between rounds, so anything else
// (forged, altered, another tool's) is refused.
func (a *asks) verify(tool, state string) (string, bool) {
	parts := strings.Split(state, ".")
	if len(parts) != 3 || parts[0] != stateVersion {
		return "", false
	}
	enc := base64.RawURLEncoding
	id, err := enc.DecodeString(parts[1])
	if err != nil || len(id) == 0 {
		return "", false
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, a.mac(tool, string(id))) {
		return "", false
	}
	return string(id), true
}

// canElicit reports whether the client advertised form elicitation. An
// elicitation capability naming neither mode means form (protocols
// before 2025-11-25 had no modes).
func canElicit(c *mcp.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

// answers routes a call that carries an answer (InputResponses or a
// RequestState) to answer; any other call goes to f.
func answers[In any](h *handler, f mcp.ToolHandlerFor[In, Result]) mcp.ToolHandlerFor[In, Result] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Result, error) {
		if req.Params.RequestState != "" || req.Params.InputResponses != nil {
			return h.answer(ctx, req)
		}
		return f(ctx, req, in)
	}
}

// ask starts the run in the background, detached from the call (its
// answer comes in another call), and returns the host's question as an
// input request once the host asks one; a run that ends without asking
// returns its result at once.
func (h *handler) ask(ctx context.Context, req *mcp.CallToolRequest, r localapi.ExternalRequest, p *progress) (*mcp.CallToolResult, Result, error) {
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := &job{tool: req.Params.Name, cancel: cancel, done: make(chan struct{})}
	pending := make(chan localapi.Event, 1)
	go func() {
		defer close(j.done)
		defer cancel()
		j.out = h.collect(jctx, r, p, func(e localapi.Event) {
			h.log.InfoContext(ctx, "waiting for approval, asking the client too", "request", e.ID, "console", e.Console)
			select {
			case pending <- e:
			default:
			}
		})
	}()
	select {
	case <-j.done:
		return h.result(j.out)
	case <-ctx.Done():
		return h.result(h.await(ctx, j))
	case e := <-pending:
		j.id = e.ID
		ttl := maxAskWait
		if !e.Deadline.IsZero() {
			ttl = min(max(time.Until(e.Deadline)+askGrace, askGrace), maxAskWait)
		}
		if j.id == "" || !h.asks.put(j, ttl) {
			// No id to answer by, or too many open: the console alone
			// answers, as without ask_client.
			h.log.WarnContext(ctx, "not asking the client; waiting for the console", "request", j.id, "open", h.asks.open())
			return h.result(h.await(ctx, j))
		}
		if hold, ok := ctx.Value(holdKey{}).(*hold); ok {
			hold.set(j.id)
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{inputKey: question(r, e, h.agentOf(req))},
			RequestState:  h.asks.sign(j.tool, j.id),
		}, Result{Request: j.id}, nil
	}
}

// question is the form put to the client's user.
func question(r localapi.ExternalRequest, e localapi.Event, agent string) *mcp.ElicitParams {
	what, detail := describe(r)
	msg := fmt.Sprintf("warden: %s wants to run %s; it needs approval (request %s). Also on the warden console", agent, what, e.ID)
	if e.Console != "" {
		msg += ": " + e.Console
	}
	msg += "."
	if detail != "" {
		msg += "\n\n" + detail
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Run it"},
				"reason":  map[string]any{"type": "string", "title": "Reason if not"},
			},
			"required": []string{"approve"},
		},
	}
}

// describe says what the action is, for a human: a line, and the
// program text of code (capped at maxShown bytes).
func describe(r localapi.ExternalRequest) (string, string) {
	a := r.Action
	switch a.Kind {
	case action.Shell:
		return fmt.Sprintf("the shell command `%s` in %s", a.Command, a.Dir), ""
	case action.Code:
		src := a.Source
		if len(src) > maxShown {
			src = src[:maxShown] + fmt.Sprintf("\n[… %d more bytes]", len(a.Source)-maxShown)
		}
		return fmt.Sprintf("a %s program in %s", a.Language, a.Dir), src
	case action.Write:
		return fmt.Sprintf("a write of %d bytes to %s", len(r.Content), a.Path), ""
	}
	return fmt.Sprintf("a %s action", a.Kind), ""
}

// answer is the second round: it checks the state, answers the host's
// request as the client's user did and returns the run's outcome. A
// state warden did not sign, or whose question is no longer open,
// answers nothing.
func (h *handler) answer(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, Result, error) {
	if h.asks == nil {
		return toolError("this call carries an answer, but warden asked its client nothing (mcp.ask_client is off)")
	}
	id, ok := h.asks.verify(req.Params.Name, req.Params.RequestState)
	if !ok {
		h.log.WarnContext(ctx, "refused an answer with a bad request state", "tool", req.Params.Name)
		return toolError("the answer's request state is not one warden gave for this tool; nothing was approved")
	}
	j := h.asks.claim(id)
	if j == nil {
		return toolError(fmt.Sprintf("question %s is no longer open here (answered, expired or withdrawn); nothing was approved", id))
	}
	agent := h.agentOf(req)
	approve, reason := readAnswer(req.Params.InputResponses, agent)
	in := h.deliver(ctx, j, approve, reason, agent)
	o := h.await(ctx, j)
	o.res.AnsweredIn = in
	return h.result(o)
}

// readAnswer reads the client's form: approve only on accept with
// approve exactly true; anything else denies, with the user's reason
// when they gave one.
func readAnswer(in mcp.InputResponseMap, agent string) (bool, string) {
	er, ok := in[inputKey].(*mcp.ElicitResult)
	if !ok || er == nil {
		return false, "no answer came from " + agent
	}
	reason, _ := er.Content["reason"].(string)
	reason = strings.TrimSpace(reason)
	if len(reason) > maxReason {
		reason = reason[:maxReason] + "…"
	}
	switch er.Action {
	case "accept":
		if v, ok := er.Content["approve"].(bool); ok && v {
			return true, ""
		}
		if reason == "" {
			reason = "not approved in " + agent
		}
	case "decline":
		if reason == "" {
			reason = "declined in " + agent
		}
	default: // cancel, or anything unknown
		if reason == "" {
			reason = "dismissed in " + agent
		}
	}
	return false, reason
}

// deliver sends the client's answer to the host and says who answered:
// answeredInClient when it took, "" when the console had answered
// first (409). Any other failure cancels the run, which withdraws the
// question or stops the command: an answer warden cannot deliver must
// never leave a run to go ahead unseen.
func (h *handler) deliver(ctx context.Context, j *job, approve bool, reason, agent string) string {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	by := "mcp client " + agent
	var err error
	if approve {
		_, err = h.o.Answerer.Approve(actx, j.id, localapi.ApproveRequest{By: by})
	} else {
		_, err = h.o.Answerer.Deny(actx, j.id, localapi.DenyRequest{Reason: reason, By: by})
	}
	switch {
	case err == nil:
		return answeredInClient
	case errors.Is(err, store.ErrNotPending):
		h.log.InfoContext(ctx, "the console answered first; the client's answer is ignored", "request", j.id, "approve", approve)
		return ""
	}
	h.log.WarnContext(ctx, "could not answer the request; withdrawing it", "request", j.id, "err", err)
	j.cancel()
	return ""
}

// await returns the job's outcome, cancelling its run if the call ends
// first (the client gave up: as without ask_client, a hang-up withdraws
// the question or stops the command).
func (h *handler) await(ctx context.Context, j *job) outcome {
	select {
	case <-j.done:
	case <-ctx.Done():
		j.cancel()
		<-j.done
	}
	return j.out
}

// holdKey carries a *hold through a tools/call's context.
type holdKey struct{}

// hold records the request a call put to the client, for
// denyUnanswered.
type hold struct {
	mu sync.Mutex
	id string
}

func (h *hold) set(id string) { h.mu.Lock(); h.id = id; h.mu.Unlock() }
func (h *hold) get() string   { h.mu.Lock(); defer h.mu.Unlock(); return h.id }

// denyUnanswered denies the question of a tools/call that failed after
// putting it to the client. For a client on an older protocol the SDK's
// shim sends the elicitation within the call; when that fails (the
// client errs, hangs up, or cancels the call) the call ends in an error
// and the second round never comes, so the question is denied now
// rather than left open for the console.
func (h *handler) denyUnanswered(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		hd := &hold{}
		res, err := next(context.WithValue(ctx, holdKey{}, hd), method, req)
		if err != nil {
			if j := h.asks.claim(hd.get()); j != nil {
				agent := h.agentName()
				h.log.WarnContext(ctx, "the client's question failed; denying", "request", j.id, "err", err)
				h.deliver(ctx, j, false, "the question could not be put to "+agent+" ("+err.Error()+")", agent)
			}
		}
		return res, err
	}
}

// agentName is the client's name once a call pinned it.
func (h *handler) agentName() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.agent == "" {
		return DefaultAgent
	}
	return h.agent
}
