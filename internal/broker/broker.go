// Package broker holds questions to humans. A Request belongs to one
// session and is shown only on that session's surfaces; it ends exactly
// once — answered, denied, expired or withdrawn — by a compare-and-swap
// in the store, which writes the audit record of each change in the same
// transaction, and the waiter wakes with that one outcome. Owners
// without a live answer channel never get here: they are decided by
// their mode at once.
//
// A request is never left pending with nobody waiting for it: when the
// store refuses to end one (a full disk), its waiter is woken anyway
// (nothing ran, so that is safe) and the broker keeps withdrawing the
// request until the store takes it; a human's answer to a request of
// this host whose asker is gone is refused, and the request withdrawn.
package broker

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// Sentinel errors.
var (
	// ErrNotPending: the request already ended; a late answer must be
	// told so, never "approved".
	ErrNotPending = store.ErrNotPending
	// ErrNoChannel: the owner has no live answer channel, so no human
	// can be asked (invariant 9).
	ErrNoChannel = errors.New("no answer channel for this owner")
	// ErrContent: form content given where it does not belong (a denial,
	// an approval request) or not a JSON object.
	ErrContent = errors.New("bad elicitation content")
	// ErrClosed: the broker is shutting down.
	ErrClosed = errors.New("broker closed")
	// ErrNoWaiter: the request belongs to this host but its asker is
	// gone; it is withdrawn rather than answered.
	ErrNoWaiter = errors.New("nobody is waiting for this request any more")
)

// retryEvery is how often the broker tries again to withdraw requests
// the store refused to end.
const retryEvery = 500 * time.Millisecond

// Options configure a Broker.
type Options struct {
	Requests store.Requests
	// Grants records session and always approvals; nil records none.
	Grants store.Grants
	// Host identifies this process; requests it holds carry it.
	Host string
	// Alive reports whether another broker (by its Host id) is still
	// running, so Recover leaves its requests alone; nil means none is.
	Alive func(host string) bool
	// Timeout is the default wait for a human.
	Timeout time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
}

// Broker routes questions to humans and wakes their askers.
type Broker struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	closed  bool
	waiters map[string]*waiter      // request id → its waiter
	leaders map[coalesceKey]*waiter // identical pending questions
	subs    map[*sub]struct{}
	// remote are other hosts' pending requests this host's surfaces
	// were told of (shared.go).
	remote map[string]struct{}
	ids    *ulid.MonotonicEntropy
	// orphans are requests whose waiter is gone but which the store
	// refused to end; retrying says whether their retry loop runs.
	orphans  map[string]store.Resolution
	retrying bool
	stop     chan struct{}
	retried  sync.WaitGroup
}

type coalesceKey struct{ session, digest string }

// waiter is a live asker.
type waiter struct {
	id      string
	key     coalesceKey
	req     store.Request  // as created; read-only
	created chan struct{}  // closed once req is stored (or failed to be)
	done    chan struct{}  // closed once final is set
	final   *store.Request // set once, before done is closed
	// parked are the askers waiting in a Parker (park.go), interrupted
	// when the request ends.
	parked []Parker
}

// New returns a Broker.
func New(o Options) *Broker {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Broker{
		o: o, log: o.Logger.With("component", "broker"),
		waiters: map[string]*waiter{}, leaders: map[coalesceKey]*waiter{}, subs: map[*sub]struct{}{}, remote: map[string]struct{}{},
		ids: ulid.Monotonic(rand.Reader, 0), orphans: map[string]store.Resolution{}, stop: make(chan struct{}),
	}
}

// Question is what an asker needs a human to decide.
type Question struct {
	Owner  owner.Owner
	Action action.Action
	// Classes and Rule come from the gate's decision; Analysis is the
	// shell analysis as JSON if the action has one, marshalled by the
	// asker: the request keeps it for display and for checking a prefix
	// grant (grant.CheckPrefixJSON), and the broker never reads its type.
	Classes  []string
	Rule     string
	Analysis json.RawMessage
	// Timeout overrides the broker's default.
	Timeout time.Duration
	// Notice is what the human must be told with the question (the
	// gate's Decision.Notice).
	Notice string
	// Elicit, when set, makes the question an MCP server's elicitation
	// (Action is then the mcp action whose call caused it): it never
	// coalesces with another question and its answer grants nothing.
	Elicit *store.Elicitation
	// Joined, if set, is called when the question joins an identical
	// pending request instead of creating one (whose creation wrote the
	// ask's audit record): the asker records its own ask. An error ends
	// the ask with that error; the request stays for its other askers.
	Joined func(store.Request) error
}

// Prompter is an answer channel that asks its human itself, such as
// warden chat's terminal: Ask hands it each question of its owner once
// the question is pending (or the identical pending one it joined), and
// waits while it asks. Other surfaces (the console) watch the broker
// instead. It is the one way an asker hears of its question: see
// Notifying.
type Prompter interface {
	owner.AnswerChannel
	Prompt(ctx context.Context, r store.Request)
}

// Notifying returns o with its answer channel wrapped in a Prompter that
// calls notify with each of o's questions once it is pending, before the
// channel's own Prompt if it has one — so an asker (an agent run, a
// console command, an exec stream) can say where to answer. An owner
// without a channel is returned as it is: nobody can be asked for it,
// and attaching a channel would make it attended.
func Notifying(o owner.Owner, notify func(store.Request)) owner.Owner {
	ch, ok := o.Channel()
	if !ok || notify == nil {
		return o
	}
	n, err := o.WithChannel(notifier{AnswerChannel: ch, notify: notify})
	if err != nil {
		return o // cannot happen: o already holds a channel
	}
	return n
}

// WithNotify is ctx with its owner made Notifying; ctx as it is when it
// carries no owner.
func WithNotify(ctx context.Context, notify func(store.Request)) context.Context {
	o, ok := owner.From(ctx)
	if !ok {
		return ctx
	}
	return owner.With(ctx, Notifying(o, notify))
}

// notifier is a channel that tells its asker of each question, then lets
// the channel it wraps prompt.
type notifier struct {
	owner.AnswerChannel
	notify func(store.Request)
}

// Prompt implements Prompter.
func (n notifier) Prompt(ctx context.Context, r store.Request) {
	n.notify(r)
	if p, ok := n.AnswerChannel.(Prompter); ok {
		p.Prompt(ctx, r)
	}
}

func channelOf(o owner.Owner) owner.AnswerChannel {
	ch, _ := o.Channel()
	return ch
}

// Approved reports whether a final request lets its action run.
func Approved(r store.Request) bool { return r.State == store.Answered }

// Ask puts a question to the owner's session and waits for its one
// outcome: answered, denied, expired (the deadline passed) or withdrawn
// (ctx ended, the session ended, the host stopped). Identical concurrent
// questions of one session share one request; a "once" answer covers
// only the first asker, so the others ask again.
func (b *Broker) Ask(ctx context.Context, q Question) (store.Request, error) {
	r, err := b.ask(ctx, &q)
	if r == nil {
		return store.Request{}, err
	}
	return *r, err
}

// ask is Ask with pointers, so that the frames under which an asker
// waits stay small.
func (b *Broker) ask(ctx context.Context, q *Question) (*store.Request, error) {
	if !q.Owner.Attended() {
		return nil, ErrNoChannel
	}
	session := q.Owner.SessionKey()
	if session == "" {
		return nil, fmt.Errorf("%w: owner %s has no session key", ErrNoChannel, q.Owner)
	}
	key := b.keyOf(q, session)
	for {
		p, r, err := b.put(ctx, key, q)
		if p == nil {
			return r, err
		}
		if final, again := p.wait(ctx); !again {
			return final, nil
		}
	}
}

// Pending is a question put (Put) whose asker has not waited yet.
type Pending struct {
	b      *Broker
	w      *waiter
	q      *Question
	leader bool
	// final and again are wait's outcome once awaited.
	final          *store.Request
	again, awaited bool
}

// Put puts a question as Ask does but does not wait for it: the
// returned Pending's Wait does. When the question ended already (or
// could not be put) Put returns a nil Pending with the request as it
// ended, or the error. Splitting the two lets an asker wait in a
// goroutine of its own whose stack never held the gate's work (a
// host holding many waiters keeps each small: see Parker).
func (b *Broker) Put(ctx context.Context, q Question) (*Pending, store.Request, error) {
	if !q.Owner.Attended() {
		return nil, store.Request{}, ErrNoChannel
	}
	session := q.Owner.SessionKey()
	if session == "" {
		return nil, store.Request{}, fmt.Errorf("%w: owner %s has no session key", ErrNoChannel, q.Owner)
	}
	p, r, err := b.put(ctx, b.keyOf(&q, session), &q)
	if r == nil {
		return p, store.Request{}, err
	}
	return p, *r, err
}

// Await waits for the question to end without taking its outcome, so
// an asker can wait under as few stack frames as it can and build on the
// outcome afterwards; Wait then returns at once. One goroutine at a
// time.
func (p *Pending) Await(ctx context.Context) {
	if !p.awaited {
		p.final, p.again = p.wait(ctx)
		p.awaited = true
	}
}

// Wait waits for the question's one outcome, as Ask does.
func (p *Pending) Wait(ctx context.Context) (store.Request, error) {
	p.Await(ctx)
	if !p.again {
		return *p.final, nil
	}
	r, err := p.b.ask(ctx, p.q)
	if r == nil {
		return store.Request{}, err
	}
	return *r, err
}

// wait waits for p's request; again reports a follower's "once"
// approval, which covered only the leader: the asker must ask again.
func (p *Pending) wait(ctx context.Context) (final *store.Request, again bool) {
	if pk, ok := ctx.Value(parkerKey{}).(Parker); ok {
		final = p.b.park(ctx, p.w, pk, p.leader) // without wait's frame
	} else {
		final = p.b.wait(ctx, p.w, p.leader)
	}
	if !p.leader && final.State == store.Answered && final.Scope == store.Once && p.q.Elicit == nil {
		return nil, true // once is once: ask again for this action
	}
	return final, false
}

// keyOf is the key identical questions of a session share.
func (b *Broker) keyOf(q *Question, session string) coalesceKey {
	key := coalesceKey{session, q.Action.Digest()}
	if q.Elicit != nil {
		// Each elicitation is its own question, however alike.
		key.digest = "elicit:" + ulid.MustNew(ulid.Timestamp(b.o.Now()), rand.Reader).String()
	}
	return key
}

// put joins or creates the request and announces it; a nil Pending
// ends the ask with r or err.
func (b *Broker) put(ctx context.Context, key coalesceKey, q *Question) (*Pending, *store.Request, error) {
	w, leader, err := b.join(ctx, key, q)
	if err != nil {
		return nil, nil, err
	}
	if r, err := b.announce(ctx, w, q, leader); r != nil || err != nil {
		return nil, r, err
	}
	return &Pending{b: b, w: w, q: q, leader: leader}, nil, nil
}

// announce records a follower's own ask and hands the question to the
// owner's Prompter, if it has one; a non-nil result or error ends the
// ask. Its own frame holds the request copies it passes on, not the
// asker's while it waits.
func (b *Broker) announce(ctx context.Context, w *waiter, q *Question, leader bool) (*store.Request, error) {
	if !leader && q.Joined != nil {
		select {
		case <-w.created:
		case <-ctx.Done():
			return &store.Request{ID: w.id, State: store.Withdrawn, Reason: causeOf(ctx)}, nil
		}
		select {
		case <-w.done:
			if w.final.State == store.Withdrawn && w.final.Resolved.IsZero() {
				// Its creation failed: there is nothing to join.
				return w.final, nil
			}
		default:
		}
		if err := q.Joined(w.req); err != nil {
			return nil, err
		}
	}
	if prompter, ok := channelOf(q.Owner).(Prompter); ok {
		select {
		case <-w.created:
			prompter.Prompt(ctx, w.req)
		case <-ctx.Done():
		}
	}
	return nil, nil
}

// join becomes the leader of a new request, or follows an identical
// pending one.
func (b *Broker) join(ctx context.Context, key coalesceKey, q *Question) (*waiter, bool, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, false, ErrClosed
	}
	if w, ok := b.leaders[key]; ok {
		b.mu.Unlock()
		return w, false, nil
	}
	now := b.o.Now()
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = b.o.Timeout
	}
	id := ulid.MustNew(ulid.Timestamp(now), b.ids).String()
	r, err := b.request(id, q, now, now.Add(timeout))
	if err != nil {
		b.mu.Unlock()
		return nil, false, fmt.Errorf("create request: %w", err)
	}
	w := &waiter{id: id, key: key, req: r, created: make(chan struct{}), done: make(chan struct{})}
	b.waiters[id] = w
	b.leaders[key] = w
	b.mu.Unlock()

	err = b.o.Requests.CreateRequest(ctx, r)
	if err != nil {
		b.mu.Lock()
		delete(b.waiters, id)
		delete(b.leaders, key)
		b.mu.Unlock()
		// Followers that joined meanwhile must not hang.
		w.final = &store.Request{ID: id, State: store.Withdrawn, Reason: "store error: " + err.Error()}
		close(w.created)
		close(w.done)
		return nil, false, fmt.Errorf("create request: %w", err)
	}
	close(w.created)
	b.publish(Event{Type: Created, Request: r})
	b.log.InfoContext(ctx, "request pending", "id", id, "session", key.session, "owner", r.OwnerText)
	return w, true, nil
}

func (b *Broker) request(id string, q *Question, now, deadline time.Time) (store.Request, error) {
	ownerJSON, err := json.Marshal(q.Owner)
	if err != nil {
		return store.Request{}, err
	}
	return store.Request{
		ID: id, Session: q.Owner.SessionKey(), Owner: ownerJSON, OwnerText: q.Owner.String(),
		Action: q.Action, Digest: q.Action.Digest(), Classes: q.Classes, Analysis: q.Analysis, Rule: q.Rule,
		Created: now, Deadline: deadline, Host: b.o.Host, State: store.Pending, Elicit: q.Elicit, Notice: q.Notice,
	}, nil
}

// wait blocks until the request ends. A leader ends it itself on its
// deadline or when its ctx ends; the first resolution wins either way.
// It returns a pointer, so that the frames of a waiting asker stay small
// (a request is a large struct; see park.go).
func (b *Broker) wait(ctx context.Context, w *waiter, leader bool) *store.Request {
	if p, ok := ctx.Value(parkerKey{}).(Parker); ok {
		return b.park(ctx, w, p, leader)
	}
	if !leader {
		select {
		case <-w.done:
			return w.final
		case <-ctx.Done():
			// A follower leaving does not end the leader's question.
			return &store.Request{ID: w.id, State: store.Withdrawn, Reason: causeOf(ctx)}
		}
	}
	timer := time.NewTimer(time.Until(w.req.Deadline))
	defer timer.Stop()
	select {
	case <-w.done:
		return w.final
	case <-timer.C:
		b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Expired, Reason: "no answer before the deadline", At: b.o.Now()})
	case <-ctx.Done():
		b.end(context.WithoutCancel(ctx), w.id, store.Resolution{State: store.Withdrawn, Reason: causeOf(ctx), At: b.o.Now()})
	}
	<-w.done
	return w.final
}

func causeOf(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil {
		return c.Error()
	}
	return "asker went away"
}

// end resolves a request on the asker's behalf; losing the race to a
// human's answer is fine.
func (b *Broker) end(ctx context.Context, id string, res store.Resolution) {
	r, err := b.resolve(ctx, id, res, "")
	if errors.Is(err, ErrNotPending) {
		// It ended elsewhere (another host, a restart recovery): the
		// waiter takes that ending.
		b.wake(r)
		return
	}
	if err != nil {
		// The store refused: wake the waiter anyway, as withdrawn, so no
		// asker hangs. Nothing ran, so failing closed is safe. The row
		// is still pending with nobody waiting: withdraw it once the
		// store takes writes again.
		b.log.ErrorContext(ctx, "end request", "id", id, "err", err)
		b.wake(store.Request{ID: id, State: store.Withdrawn, Reason: "store error: " + err.Error()})
		b.orphan(id, store.Resolution{State: store.Withdrawn, Reason: "the asker went away while the store refused writes (" + res.Reason + ")"})
	}
}

// orphan remembers a request to withdraw, and starts the retry loop if
// it is not running.
func (b *Broker) orphan(id string, res store.Resolution) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.orphans[id] = res
	if b.retrying {
		return
	}
	b.retrying = true
	b.retried.Go(b.retryOrphans)
}

// retryOrphans withdraws the orphans until none is left or the broker
// closes; whatever is left then, the next start's Recover withdraws.
func (b *Broker) retryOrphans() {
	t := time.NewTicker(retryEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			b.mu.Lock()
			b.retrying = false
			b.mu.Unlock()
			return
		case <-t.C:
		}
		if b.withdrawOrphans(context.Background()) == 0 {
			b.mu.Lock()
			if len(b.orphans) == 0 {
				b.retrying = false
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
		}
	}
}

// withdrawOrphans tries each orphan once and returns how many are left.
func (b *Broker) withdrawOrphans(ctx context.Context) int {
	b.mu.Lock()
	todo := make(map[string]store.Resolution, len(b.orphans))
	maps.Copy(todo, b.orphans)
	b.mu.Unlock()
	left := 0
	for id, res := range todo {
		res.At = b.o.Now()
		r, err := b.o.Requests.ResolveRequest(ctx, id, res)
		switch {
		case err == nil:
			b.publish(Event{Type: Ended, Request: r})
			b.log.InfoContext(ctx, "orphaned request withdrawn", "id", id)
		case errors.Is(err, ErrNotPending), errors.Is(err, store.ErrNotFound):
		default:
			left++
			continue
		}
		b.mu.Lock()
		delete(b.orphans, id)
		b.mu.Unlock()
	}
	return left
}

// Answer is a human's decision on one request.
type Answer struct {
	// Approve is false for a denial.
	Approve bool
	Scope   store.Scope // once, session or always (approvals only)
	Grain   grant.Grain // exact, prefix or class (session and always)
	// Pattern overrides the grant pattern for the prefix grain; empty
	// derives it from the command.
	Pattern string
	By      string
	Surface string
	// Reason is a denial's reason, shown to the agent.
	Reason string
	// Content is an accepted elicitation's values (a JSON object); it is
	// refused for any other request.
	Content json.RawMessage
}

// Elicitation outcomes, as MCP names them.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitOutcome maps an ended elicitation to MCP's action: a human's
// approval accepts (with its content), a denial declines, and an expiry
// or withdrawal cancels.
func ElicitOutcome(r store.Request) (string, json.RawMessage) {
	switch r.State {
	case store.Answered:
		return ElicitAccept, r.Content
	case store.Denied:
		return ElicitDecline, nil
	}
	return ElicitCancel, nil
}

// Resolve answers one request. An answer to a request that already ended
// returns ErrNotPending with the request as it ended. A request of this
// host whose asker is gone (its waiter was woken by a store failure) is
// not answered: it is withdrawn, and the answer gets ErrNoWaiter.
func (b *Broker) Resolve(ctx context.Context, id string, a Answer) (store.Request, error) {
	b.mu.Lock()
	_, waiting := b.waiters[id]
	b.mu.Unlock()
	if !waiting {
		// No asker here: fine for another live host's request, not for
		// one of this host's, whose asker is gone, nor for one of a host
		// that is gone (its asker went with it).
		if r, err := b.o.Requests.GetRequest(ctx, id); err == nil && r.State == store.Pending &&
			(r.Host == b.o.Host || (b.o.Alive != nil && !b.o.Alive(r.Host))) {
			ended, err := b.resolve(ctx, id, store.Resolution{State: store.Withdrawn, Reason: "its asker went away"}, "")
			if err != nil && !errors.Is(err, ErrNotPending) {
				b.orphan(id, store.Resolution{State: store.Withdrawn, Reason: "its asker went away"})
			}
			if errors.Is(err, ErrNotPending) {
				return ended, err
			}
			return ended, fmt.Errorf("answer %s: %w", id, ErrNoWaiter)
		}
	}
	res := store.Resolution{State: store.Denied, By: a.By, Surface: a.Surface, Reason: a.Reason, At: b.o.Now()}
	if len(a.Content) > 0 {
		if !a.Approve {
			return store.Request{}, fmt.Errorf("answer %s: content with a denial: %w", id, ErrContent)
		}
		r, err := b.o.Requests.GetRequest(ctx, id)
		if err != nil {
			return r, err
		}
		if r.Elicit == nil {
			return r, fmt.Errorf("answer %s: content for an approval request: %w", id, ErrContent)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(a.Content, &obj); err != nil || obj == nil {
			return r, fmt.Errorf("answer %s: content is not a JSON object: %w", id, ErrContent)
		}
		res.State, res.Scope, res.Reason, res.Content = store.Answered, store.Once, "", a.Content
		return b.finish(ctx, id, res, "")
	}
	if a.Approve {
		res.State, res.Scope, res.Reason = store.Answered, a.Scope, ""
		if res.Scope == "" {
			res.Scope = store.Once
		}
		if res.Scope != store.Once {
			res.Grain = a.Grain
			if res.Grain == "" {
				res.Grain = grant.Exact
			}
			if res.Grain == grant.Prefix {
				r, err := b.o.Requests.GetRequest(ctx, id)
				if err != nil {
					return r, err
				}
				if err := checkPattern(r, a.Pattern); err != nil {
					return r, err
				}
			}
		}
	}
	return b.finish(ctx, id, res, a.Pattern)
}

// finish ends a human-answered request; an answer past the deadline
// expires it instead.
func (b *Broker) finish(ctx context.Context, id string, res store.Resolution, pattern string) (store.Request, error) {
	r, err := b.resolve(ctx, id, res, pattern)
	if errors.Is(err, ErrNotPending) && r.State == store.Pending {
		// Past its deadline but not yet expired by its waiter's timer:
		// end it now, and the late answer is told it had expired.
		if exp, eerr := b.resolve(ctx, id, store.Resolution{State: store.Expired, Reason: "no answer before the deadline"}, ""); eerr == nil || errors.Is(eerr, ErrNotPending) {
			r = exp
		}
	}
	return r, err
}

// resolve is the one compare-and-swap every ending goes through.
func (b *Broker) resolve(ctx context.Context, id string, res store.Resolution, pattern string) (store.Request, error) {
	if res.At.IsZero() {
		res.At = b.o.Now()
	}
	r, err := b.o.Requests.ResolveRequest(ctx, id, res)
	if err != nil {
		return r, err
	}
	if r.State == store.Answered && r.Scope != store.Once && r.Elicit == nil && b.o.Grants != nil {
		gs, _ := grantFor(r, pattern)
		for _, g := range gs {
			if err := b.o.Grants.AddGrant(ctx, g); err != nil {
				// The approval stands for this action; the grant is lost.
				b.log.ErrorContext(ctx, "record grant", "id", id, "err", err)
			}
		}
	}
	b.wake(r)
	b.publish(Event{Type: Ended, Request: r})
	b.log.InfoContext(ctx, "request ended", "id", id, "state", r.State, "scope", r.Scope, "by", r.By, "surface", r.Surface)
	return r, nil
}

// wake hands the final row to a local waiter, if this host has one.
func (b *Broker) wake(r store.Request) {
	b.mu.Lock()
	w, ok := b.waiters[r.ID]
	var parked []Parker
	if ok {
		delete(b.waiters, r.ID)
		if b.leaders[w.key] == w {
			delete(b.leaders, w.key)
		}
		w.final = &r
		close(w.done)
		parked = slices.Clone(w.parked)
	}
	b.mu.Unlock()
	for _, p := range parked {
		p.Interrupt()
	}
}

// Wake is for hosts sharing a store: another host ended a request this
// host's waiter holds.
func (b *Broker) Wake(ctx context.Context, id string) {
	r, err := b.o.Requests.GetRequest(ctx, id)
	if err == nil && r.State != store.Pending {
		b.wake(r)
	}
}

// ResolveOldest answers the oldest pending request of a session.
func (b *Broker) ResolveOldest(ctx context.Context, session string, a Answer) (store.Request, error) {
	pending, err := b.o.Requests.PendingRequests(ctx, session)
	if err != nil {
		return store.Request{}, err
	}
	if len(pending) == 0 {
		return store.Request{}, ErrNotPending
	}
	return b.Resolve(ctx, pending[0].ID, a)
}

// ResolveAll answers every pending request of a session and returns the
// ones it ended.
func (b *Broker) ResolveAll(ctx context.Context, session string, a Answer) ([]store.Request, error) {
	pending, err := b.o.Requests.PendingRequests(ctx, session)
	if err != nil {
		return nil, err
	}
	var out []store.Request
	for _, p := range pending {
		r, err := b.Resolve(ctx, p.ID, a)
		if errors.Is(err, ErrNotPending) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Pending lists pending requests, oldest first; session "" means all.
func (b *Broker) Pending(ctx context.Context, session string) ([]store.Request, error) {
	return b.o.Requests.PendingRequests(ctx, session)
}

// EndSession withdraws a session's pending requests and wakes their
// askers.
func (b *Broker) EndSession(ctx context.Context, session, cause string) error {
	pending, err := b.o.Requests.PendingRequests(ctx, session)
	if err != nil {
		return err
	}
	for _, p := range pending {
		b.end(ctx, p.ID, store.Resolution{State: store.Withdrawn, Reason: cause})
	}
	return nil
}

// Recover withdraws the pending requests of brokers that are gone (an
// earlier run of the host): their askers cannot be woken, so nobody may
// answer them into "approved". Requests of live brokers sharing the
// store (a `warden chat` beside the host, other hosts on a shared
// database) are left alone.
func (b *Broker) Recover(ctx context.Context) (int, error) {
	if b.o.Alive == nil {
		return b.o.Requests.WithdrawHostRequests(ctx, b.o.Host, store.Resolution{State: store.Withdrawn, Reason: "host restarted", At: b.o.Now()})
	}
	n, err := b.Withdraw(ctx, b.o.Alive, "host restarted")
	if err != nil {
		return n, fmt.Errorf("recover: %w", err)
	}
	return n, nil
}

// Close withdraws every request this host holds, with cause, and refuses
// new ones. Orphans the store still refuses are left for the next
// start's Recover.
func (b *Broker) Close(ctx context.Context, cause string) {
	b.mu.Lock()
	if !b.closed {
		close(b.stop)
	}
	b.closed = true
	ids := make([]string, 0, len(b.waiters))
	for id := range b.waiters {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		b.end(ctx, id, store.Resolution{State: store.Withdrawn, Reason: cause})
	}
	b.retried.Wait()
	b.withdrawOrphans(ctx)
	b.mu.Lock()
	for s := range b.subs {
		close(s.ch)
		delete(b.subs, s)
	}
	b.mu.Unlock()
}
