// Package audit turns decisions into audit records: who (the owner, all
// fields and lineage), what (the action, secrets redacted for display,
// the SHA-256 of the exact payload kept), the verdict, the deciding rule,
// the answering human and surface, and when. The store chains and keeps
// them; this package only builds them.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/redact"
	"github.com/wardenhq/warden/internal/store"
)

// Redact hides credentials in s for display.
func Redact(s string) string { return redact.String(s) }

// Record builds the audit record of one decision. req is the request a
// human answered, if any.
func Record(now time.Time, o owner.Owner, act action.Action, d gate.Decision, req *store.Request) store.Decision {
	ownerJSON, _ := json.Marshal(o)
	payload := act.Payload()
	sum := sha256.Sum256([]byte(payload))
	rec := store.Decision{
		Time: now.UTC(), Session: o.SessionKey(), Owner: ownerJSON, OwnerText: o.String(),
		Kind: act.Kind, Payload: Redact(payload), PayloadHash: hex.EncodeToString(sum[:]),
		Classes: d.Classes, Verdict: string(d.Verdict), Rule: d.Rule,
	}
	if !o.Valid() {
		rec.OwnerText, rec.Owner = "", json.RawMessage("null")
	}
	if req != nil {
		rec.RequestID, rec.By, rec.Surface = req.ID, req.By, req.Surface
		rec.Reason = req.Reason
		rec.Rule = gate.RuleHuman
		switch req.State {
		case store.Answered:
			rec.Verdict = string(gate.Allow)
			rec.Rule = gate.RuleHuman + "." + string(req.Scope)
		default:
			rec.Verdict = string(gate.Deny)
			rec.Rule = gate.RuleHuman + "." + string(req.State)
		}
	}
	return rec
}

// VerdictRefused is the verdict of an answer that was not taken: the
// request stays as it was.
const VerdictRefused = "refused"

// RuleAnswerRefused is the rule of a refused answer's record.
const RuleAnswerRefused = "answer.refused"

// Refusal builds the record of an answer that was not taken (someone
// not allowed to answer clicked, a bot answered, an answer came from
// another conversation): the request's owner and action, who tried, on
// which surface, and why it was refused. Nothing was resolved.
func Refusal(now time.Time, req store.Request, by, surface, why string) store.Decision {
	payload := req.Action.Payload()
	sum := sha256.Sum256([]byte(payload))
	owner := req.Owner
	if len(owner) == 0 {
		owner = json.RawMessage("null")
	}
	return store.Decision{
		Time: now.UTC(), Session: req.Session, Owner: owner, OwnerText: req.OwnerText,
		Kind: req.Action.Kind, Payload: Redact(payload), PayloadHash: hex.EncodeToString(sum[:]),
		Classes: req.Classes, Verdict: VerdictRefused, Rule: RuleAnswerRefused,
		RequestID: req.ID, By: by, Surface: surface, Reason: why,
	}
}
