package gate

import (
	"context"
	"sync"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/owner"
)

// GuardianVerdict is a reviewer's structured answer.
type GuardianVerdict string

// Guardian verdicts. Anything else, an error or a timeout counts as
// escalate: a guardian can refuse or hand over, never approve by failing.
const (
	GuardianApprove  GuardianVerdict = "approve"
	GuardianDeny     GuardianVerdict = "deny"
	GuardianEscalate GuardianVerdict = "escalate"
)

// Review is what a guardian sees. The action is untrusted data.
type Review struct {
	Owner   owner.Owner
	Action  action.Action
	Classes []string
	What    string
}

// GuardianResult is a reviewer's verdict with its reason.
type GuardianResult struct {
	Verdict GuardianVerdict
	// Reason is the reviewer's explanation. It may be model-written and
	// so shaped by the action under review: it is shown to the agent
	// with a denial and recorded in the steps, never offered to the human
	// as advice.
	Reason string
	// Notice, on an escalation, is the reviewer's own trusted message for
	// the human (the reviewer failed, the session fell back to manual);
	// the gate copies it to Decision.Notice.
	Notice string
}

// Guardian reviews dangerous actions of attended owners under mode smart.
type Guardian interface {
	Review(ctx context.Context, r Review) (GuardianResult, error)
}

// review asks the guardian, mapping failures to escalate.
func (g *Gate) review(ctx context.Context, p *Policy, o owner.Owner, act action.Action, as *assessment) GuardianResult {
	r, err := g.guardian.Review(ctx, Review{Owner: o, Action: act, Classes: as.classes, What: as.what})
	if err != nil {
		return GuardianResult{Verdict: GuardianEscalate, Reason: "reviewer failed: " + err.Error(),
			Notice: "The security reviewer failed (" + err.Error() + "), so you are asked instead. Nothing was auto-approved."}
	}
	switch r.Verdict {
	case GuardianApprove, GuardianDeny:
		r.Notice = ""
		return r
	}
	return GuardianResult{Verdict: GuardianEscalate, Reason: r.Reason, Notice: r.Notice}
}

// breaker counts consecutive guardian denials per session, for a bounded
// number of sessions (the least recently denied is forgotten first).
type breaker struct {
	mu    sync.Mutex
	limit int
	tick  uint64
	n     map[string]*streak
}

type streak struct {
	count int
	last  uint64
}

func newBreaker(limit int) *breaker { return &breaker{limit: limit, n: map[string]*streak{}} }

// deny records a denial and returns the session's streak.
func (b *breaker) deny(session string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tick++
	s, ok := b.n[session]
	if !ok {
		if len(b.n) >= b.limit {
			b.evict()
		}
		s = &streak{}
		b.n[session] = s
	}
	s.count++
	s.last = b.tick
	return s.count
}

func (b *breaker) reset(session string) {
	b.mu.Lock()
	delete(b.n, session)
	b.mu.Unlock()
}

func (b *breaker) evict() {
	oldest, key := ^uint64(0), ""
	for k, s := range b.n {
		if s.last < oldest {
			oldest, key = s.last, k
		}
	}
	delete(b.n, key)
}
