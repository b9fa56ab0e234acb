package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/redact"
)

// Rules of the audit records a request's lifecycle writes. They match
// the gate's and the host's names (a test in internal/audit checks).
const (
	// RuleHuman prefixes a human's answer: human.once, human.session,
	// human.always, human.denied; and how a question ended without one:
	// human.expired, human.withdrawn.
	RuleHuman = "human"
	// RuleElicitation is an MCP server's question; its end is
	// mcp.elicitation.accept, .decline or .cancel.
	RuleElicitation = "mcp.elicitation"
)

// Verdicts of audit records, as the gate names them.
const (
	VerdictAllow = "allow"
	VerdictDeny  = "deny"
	VerdictAsk   = "ask"
)

// AskRecord is the audit record of a question put to a human: the
// request as created, verdict ask, the gate's rule, and the request's
// id, which the record of its end carries too. A store writes it in the
// transaction that creates the request.
func AskRecord(r Request) Decision {
	d := requestRecord(r)
	d.Time, d.Verdict, d.Rule = r.Created, VerdictAsk, r.Rule
	return d
}

// EndRecord is the audit record of how a request ended (r as ended): a
// human's approval is allow (rule human.SCOPE), anything else deny
// (human.denied, human.expired, human.withdrawn), with who answered,
// where, and the reason. An elicitation's end is rule
// mcp.elicitation.accept, .decline or .cancel. A store writes it in the
// transaction that ends the request, so no request ends, and no action
// is approved, without its record.
func EndRecord(r Request) Decision {
	d := requestRecord(r)
	d.Time, d.By, d.Surface, d.Reason = r.Resolved, r.By, r.Surface, r.Reason
	d.Verdict, d.Rule = VerdictDeny, RuleHuman+"."+string(r.State)
	if r.State == Answered {
		d.Verdict, d.Rule = VerdictAllow, RuleHuman+"."+string(r.Scope)
	}
	if r.Elicit != nil {
		outcome := "cancel"
		switch r.State {
		case Answered:
			outcome = "accept"
		case Denied:
			outcome = "decline"
		}
		d.Rule = RuleElicitation + "." + outcome
	}
	return d
}

func requestRecord(r Request) Decision {
	payload := r.Action.Payload()
	sum := sha256.Sum256([]byte(payload))
	return Decision{
		Session: r.Session, Owner: r.Owner, OwnerText: r.OwnerText,
		Kind: r.Action.Kind, Payload: redact.String(payload), PayloadHash: hex.EncodeToString(sum[:]),
		Classes: r.Classes, RequestID: r.ID,
	}
}

// ErrUnavailable: the store stopped accepting work. The error wrapping
// it says why: its disk is full (it recovers by itself when space
// returns), or its database file was deleted or replaced, or its audit
// log lost records behind its back (both need the operator).
var ErrUnavailable = errors.New("store unavailable")

// LossError is how an audit log falls short of a head kept outside it
// (an anchor): newest records missing, the database missing or replaced
// by another, or the anchored record changed. It matches ErrChainBroken.
type LossError struct {
	// Anchor names where the head was kept ("file PATH", "this host").
	Anchor string
	// AnchorSeq is the anchored head's sequence number; Last is the
	// log's newest.
	AnchorSeq, Last int64
	// Missing is how many of the newest records are gone.
	Missing int64
	// Gone: the database file is missing. Replaced: it is another
	// database (its first record differs from the anchored one's, or it
	// is not the file this host opened). Changed: the record at
	// AnchorSeq is not the anchored one.
	Gone, Replaced, Changed bool
}

func (e *LossError) Error() string {
	switch {
	case e.Gone:
		return fmt.Sprintf("the database is missing: %s knows of %d record(s)", e.Anchor, e.AnchorSeq)
	case e.Replaced:
		return fmt.Sprintf("the database was replaced: it is not the one %s belongs to (which had %d record(s))", e.Anchor, e.AnchorSeq)
	case e.Missing > 0:
		return fmt.Sprintf("%d newest record(s) missing: the log ends at seq %d, %s has seq %d", e.Missing, e.Last, e.Anchor, e.AnchorSeq)
	}
	return fmt.Sprintf("record %d differs from the one %s holds", e.AnchorSeq, e.Anchor)
}

// Is makes a LossError match ErrChainBroken.
func (e *LossError) Is(target error) bool { return target == ErrChainBroken }
