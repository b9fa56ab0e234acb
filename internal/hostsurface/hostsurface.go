// Package hostsurface is the host's side of internal/surface: what
// every surface (the chat adapters, the web console, the chat terminal)
// may do, each thing through the part that owns it. It is apart from
// internal/host so that a surface's tests can build it on real parts
// without building the whole host.
package hostsurface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Parts are what the host's surface interface is built on.
type Parts struct {
	Broker   *broker.Broker
	Requests interface {
		GetRequest(ctx context.Context, id string) (store.Request, error)
	}
	Sessions store.Sessions
	Runner   *runner.Runner
	// Agent answers messages; nil or one without a model refuses them
	// (surface.ErrNoModel).
	Agent *agent.Agent
	// Dir is where commands run; "" is the host's directory.
	Dir string
	// Stream asks the agent for its words as they come (Text steps with
	// Delta set), for a surface that prints them (the chat terminal).
	Stream bool
	// Console is the console's base URL ("http://host:port/"), for links
	// to requests; "" gives no links.
	Console string
	Logger  *slog.Logger
	Now     func() time.Time
}

// Surface is the host's side of internal/surface: what every surface
// may do, each thing through the part that owns it (answers through the
// broker's compare-and-swap, commands through the runner's gate, refused
// answers into the runner's audit log).
type Surface struct {
	p   Parts
	log *slog.Logger

	mu      sync.Mutex
	talking map[string]bool // conversations with a message in flight
}

var _ surface.Host = (*Surface)(nil)

// New returns the host's surface interface over p.
func New(p Parts) *Surface {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Surface{p: p, log: p.Logger.With("component", "surface"), talking: map[string]bool{}}
}

// Pending implements surface.Host.
func (s *Surface) Pending(ctx context.Context, session string) ([]store.Request, error) {
	return s.p.Broker.Pending(ctx, session)
}

// Request implements surface.Host.
func (s *Surface) Request(ctx context.Context, id string) (store.Request, error) {
	r, err := s.p.Requests.GetRequest(ctx, id)
	if err == nil && r.State != store.Pending {
		s.p.Broker.Wake(context.WithoutCancel(ctx), id)
	}
	return r, err
}

// Watch implements surface.Host.
func (s *Surface) Watch(ctx context.Context, session string) <-chan broker.Event {
	return s.p.Broker.Watch(ctx, session)
}

// Answer implements surface.Host: the broker's one compare-and-swap
// decides whether it counted. The human has spoken, so the answer is
// recorded even if the caller's context ends meanwhile.
func (s *Surface) Answer(ctx context.Context, id string, a surface.Answer) (store.Request, error) {
	if a.By.Surface == "" || a.By.User == "" {
		return store.Request{}, errors.New("answer: no proven identity")
	}
	ctx = context.WithoutCancel(ctx)
	r, err := s.p.Broker.Resolve(ctx, id, broker.Answer{
		Approve: a.Approve, Scope: a.Scope, Grain: a.Grain, Pattern: a.Pattern,
		Reason: a.Reason, Content: a.Content, By: a.By.String(), Surface: a.By.Surface,
	})
	if errors.Is(err, broker.ErrNotPending) {
		s.p.Broker.Wake(ctx, id)
	}
	return r, err
}

// Refused implements surface.Host: the runner writes the record.
func (s *Surface) Refused(ctx context.Context, r store.Request, by surface.Identity, why string) error {
	s.log.WarnContext(ctx, "answer refused", "request", r.ID, "session", r.Session, "by", by.String(), "why", why)
	return s.p.Runner.Refused(ctx, r, by.String(), by.Surface, why)
}

// Session implements surface.Host.
func (s *Surface) Session(ctx context.Context, o owner.Owner) (store.SessionRow, error) {
	key := o.SessionKey()
	if !o.Valid() || key == "" {
		return store.SessionRow{}, fmt.Errorf("open session: owner %s has no session key", o)
	}
	ownerJSON, err := json.Marshal(o)
	if err != nil {
		return store.SessionRow{}, fmt.Errorf("open session %s: %w", key, err)
	}
	if err := s.p.Sessions.UpsertSession(ctx, store.SessionRow{Key: key, Owner: ownerJSON, OwnerText: o.String(), Created: s.p.Now()}); err != nil {
		return store.SessionRow{}, fmt.Errorf("open session %s: %w", key, err)
	}
	row, err := s.p.Sessions.GetSession(ctx, key)
	if err != nil {
		return store.SessionRow{}, fmt.Errorf("open session %s: %w", key, err)
	}
	if !sameSession(row, o) {
		return row, fmt.Errorf("session %s belongs to %s: %w", key, row.OwnerText, surface.ErrForeign)
	}
	return row, nil
}

// sameSession reports whether row's owner is o's session: the same kind
// and lineage depth, and for a gateway the same platform and chat (the
// user who wrote first may differ from the one writing now).
func sameSession(row store.SessionRow, o owner.Owner) bool {
	first, err := owner.Parse(row.OwnerText)
	if err != nil || first.Kind() != o.Kind() || first.SessionKey() != o.SessionKey() || len(first.Lineage()) != len(o.Lineage()) {
		return false
	}
	if o.Kind() == owner.KindGateway {
		return first.Platform() == o.Platform() && first.Chat() == o.Chat()
	}
	// The row's owner is parsed from its text and has no answer
	// channel; o may have one (an attended terminal): compare the text,
	// which names the kind, ids, session and lineage.
	return first.String() == o.String()
}

// SetYolo implements surface.Host.
func (s *Surface) SetYolo(ctx context.Context, session string, on bool, by surface.Identity) error {
	if err := s.p.Sessions.SetYolo(ctx, session, on); err != nil {
		return fmt.Errorf("set yolo %s: %w", session, err)
	}
	s.log.WarnContext(ctx, "session yolo", "session", session, "on", on, "by", by.String())
	return nil
}

// Shell implements surface.Host.
func (s *Surface) Shell(ctx context.Context, o owner.Owner, command string, stdout, stderr io.Writer) (surface.Outcome, error) {
	if o.SessionKey() == "" {
		return surface.Outcome{}, errors.New("shell: owner has no session")
	}
	var asked string
	o = broker.Notifying(o, func(r store.Request) { asked = r.ID })
	res, code, err := s.p.Runner.Shell(owner.With(ctx, o), command, s.p.Dir, stdout, stderr)
	o2 := surface.Outcome{Request: asked, Message: res.Message}
	if res.Request != nil {
		o2.Request = res.Request.ID
	}
	if err == nil && res.Allowed {
		o2.Ran, o2.Exit = true, code
	}
	if err != nil && o2.Message == "" {
		o2.Message = err.Error()
	}
	return o2, err
}

// Converse implements surface.Host.
func (s *Surface) Converse(ctx context.Context, o owner.Owner, conversation, message string, emit func(surface.Step)) (surface.Reply, error) {
	if !s.Agent() {
		return surface.Reply{}, surface.ErrNoModel
	}
	s.mu.Lock()
	if s.talking[conversation] {
		s.mu.Unlock()
		return surface.Reply{}, surface.ErrBusy
	}
	s.talking[conversation] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.talking, conversation)
		s.mu.Unlock()
	}()
	run := agent.Run{Conversation: conversation, Dir: s.p.Dir, Stream: s.p.Stream}
	if emit != nil {
		run.Emit = func(e agent.Event) {
			emit(surface.Step{Kind: surface.StepKind(e.Kind), Text: e.Text, Delta: e.Delta, Tool: e.Tool, Args: e.Args, Request: e.Request})
		}
	}
	res, err := s.p.Agent.Run(owner.With(ctx, o), run, message)
	if errors.Is(err, llm.ErrNotConfigured) {
		err = fmt.Errorf("%w: %w", surface.ErrNoModel, err)
	}
	return surface.Reply{Text: res.Reply, Calls: res.Calls, Blocked: res.Blocked, Capped: res.Capped}, err
}

// Agent implements surface.Host.
func (s *Surface) Agent() bool { return s.p.Agent.Configured() }

// Link implements surface.Host.
func (s *Surface) Link(id string) string {
	if s.p.Console == "" || id == "" {
		return ""
	}
	return s.p.Console + "pending#req-" + id
}
