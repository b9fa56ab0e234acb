package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, secret string }{
		{"curl -H 'Authorization: Bearer abc123def' https://x", "abc123def"},
		{"API_KEY=s3cr3tvalue ./deploy.sh", "s3cr3tvalue"},
		{"mysql --password=hunter2 -e 'select 1'", "hunter2"},
		{"git clone https://user:tok3n@github.com/x/y", "tok3n"},
		{"echo sk-abcdefghijklmnopqrstuvwx | pbcopy", "sk-abcdefghijklmnopqrstuvwx"},
		{"export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwx"},
		{"curl -u admin:pa55word https://x", "pa55word"},
		{"curl -H @hdr http://127.0.0.1:7878/login/wdl_q2KxAbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AB", "wdl_q2KxAbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AB"},
		{"WARDEN=wdt_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_ABCDEFG ./bot", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		if strings.Contains(got, tt.secret) || !strings.Contains(got, "***") {
			t.Errorf("Redact(%q) = %q", tt.in, got)
		}
	}
	if got := Redact("ls -la /tmp"); got != "ls -la /tmp" {
		t.Errorf("plain command changed: %q", got)
	}
}

func TestRecord(t *testing.T) {
	o, _ := owner.Cron("nightly", "r1")
	act := action.NewShell("TOKEN=abc ./sync.sh")
	d := gate.Decision{Verdict: gate.Deny, Rule: gate.RuleCronMode, Classes: []string{"x"}}
	rec := Record(time.Unix(10, 0), o, act, d, nil)
	if rec.Verdict != "deny" || rec.Rule != gate.RuleCronMode || rec.OwnerText != o.String() || strings.Contains(rec.Payload, "abc") {
		t.Fatalf("%+v", rec)
	}
	if rec.PayloadHash == "" || len(rec.PayloadHash) != 64 {
		t.Fatalf("payload hash %q", rec.PayloadHash)
	}
	req := store.Request{ID: "q1", State: store.Denied, By: "alice", Surface: "web", Reason: "not now"}
	rec = Record(time.Unix(10, 0), o, act, gate.Decision{Verdict: gate.Ask, Rule: gate.RuleHuman}, &req)
	if rec.Verdict != "deny" || rec.Rule != "human.denied" || rec.By != "alice" || rec.Reason != "not now" || rec.RequestID != "q1" {
		t.Fatalf("%+v", rec)
	}
	req = store.Request{ID: "q2", State: store.Answered, Scope: store.Session, By: "bob", Surface: "cli"}
	if rec = Record(time.Unix(10, 0), o, act, gate.Decision{Verdict: gate.Ask}, &req); rec.Verdict != "allow" || rec.Rule != "human.session" {
		t.Fatalf("%+v", rec)
	}
}
