package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/audit"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/chattest"
	"github.com/wardenhq/warden/internal/surface/slack"
	"github.com/wardenhq/warden/internal/surface/slack/slacktest"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	botToken = "xoxb-1-test-bot-token"
	appToken = "xapp-1-test-app-token"
	channel  = "C0WARDEN"
	wait     = 20 * time.Second
)

var (
	alice   = slacktest.User{ID: "UALICE", Name: "alice"}
	mallory = slacktest.User{ID: "UMALLORY", Name: "mallory"}
	mention = "<@" + slacktest.BotUID + "> "
)

type rig struct {
	t    testing.TB
	sl   *slacktest.Server
	host *surfacetest.Host
	core *chat.Core
}

func newRig(t testing.TB) *rig {
	t.Helper()
	sl := slacktest.New(t, botToken, appToken)
	h := surfacetest.New(t, surfacetest.Options{})
	ad, err := slack.New(slack.Options{BotToken: botToken, AppToken: appToken, APIURL: sl.APIURL(), Logger: surfacetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	core, _ := chattest.Core(t, ad, h, chat.Access{Rights: chat.Rights{Approvers: chat.Allow{Users: []string{alice.ID}}}})
	sl.Wait("connected", wait, func(s *slacktest.Server) bool { return s.Connected() })
	return &rig{t: t, sl: sl, host: h, core: core}
}

func buttonID(t testing.TB, m slacktest.Message, label string) string {
	t.Helper()
	for _, a := range m.Actions {
		if a.Label == label {
			return a.ID
		}
	}
	t.Fatalf("no button %q on %q: %v", label, m.Text, m.Actions)
	return ""
}

func (r *rig) waitEdited(ts, sub string) slacktest.Message {
	r.t.Helper()
	var got slacktest.Message
	r.sl.Wait("message "+ts+" edited to "+sub, wait, func(s *slacktest.Server) bool {
		m, ok := s.Get(channel, ts)
		got = m
		return ok && m.Edits > 0 && strings.Contains(m.Text, sub)
	})
	return got
}

// approvalIn waits for the approval message posted in thread.
func (r *rig) approvalIn(thread string) slacktest.Message {
	r.t.Helper()
	var got slacktest.Message
	r.sl.Wait("an approval in thread "+thread, wait, func(s *slacktest.Server) bool {
		for _, m := range s.Messages(channel) {
			if m.User == "" && m.Thread == thread && strings.Contains(m.Text, "Approval needed") {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// TestThreadsApart: two threads are two sessions; each thread's approval
// is posted in it alone, and answering one (by button, or by a command
// in the thread) never answers the other's.
func TestThreadsApart(t *testing.T) {
	r := newRig(t)
	dirA, dirB := chattest.Target(t, r.host), chattest.Target(t, r.host)
	threadA := r.sl.Say(channel, "", alice, mention+"!"+chattest.Del(dirA))
	threadB := r.sl.Say(channel, "", alice, mention+"!"+chattest.Del(dirB))
	mA, mB := r.approvalIn(threadA), r.approvalIn(threadB)
	if !strings.Contains(mA.Text, chattest.Del(dirA)) || strings.Contains(mA.Text, chattest.Del(dirB)) || !strings.Contains(mB.Text, chattest.Del(dirB)) || strings.Contains(mB.Text, chattest.Del(dirA)) {
		t.Fatalf("approvals crossed threads:\nA: %q\nB: %q", mA.Text, mB.Text)
	}
	for _, m := range r.sl.Messages(channel) {
		if m.User == "" && strings.Contains(m.Text, "Approval needed") && m.Thread != threadA && m.Thread != threadB {
			t.Fatalf("an approval outside its thread: %+v", m)
		}
	}
	ack := r.sl.Click(alice, channel, mA.TS, buttonID(t, mA, "Approve once"))
	r.sl.WaitAck(ack, wait)
	r.waitEdited(mA.TS, "Approved once by slack:UALICE (alice)")
	r.sl.Wait("A ran", wait, func(*slacktest.Server) bool { return !chattest.Exists(dirA) })
	if !chattest.Exists(dirB) {
		t.Fatal("approving thread A ran thread B's command")
	}
	reqs, _ := r.host.Pending(context.Background(), "slack:"+channel+":"+threadB)
	if len(reqs) != 1 {
		t.Fatalf("thread B's request: %+v", reqs)
	}
	// A command in thread A finds nothing; in thread B it denies B's.
	r.sl.Say(channel, threadA, alice, mention+"/deny too late")
	r.sl.Wait("nothing pending in A", wait, func(s *slacktest.Server) bool {
		for _, m := range s.Messages(channel) {
			if m.Thread == threadA && strings.Contains(m.Text, "Nothing pending in this conversation") {
				return true
			}
		}
		return false
	})
	r.sl.Say(channel, threadB, alice, mention+"/deny not this one")
	r.waitEdited(mB.TS, "Denied by slack:UALICE on slack: not this one")
	if !chattest.Exists(dirB) {
		t.Fatal("the denied command ran")
	}
}

// TestReasonModalAndRefusal: an unlisted user's press is refused with an
// ephemeral message and audited; "Deny with reason…" opens a modal
// whose submission denies with the reason.
func TestReasonModalAndRefusal(t *testing.T) {
	r := newRig(t)
	dir := chattest.Target(t, r.host)
	thread := r.sl.Say(channel, "", alice, mention+"!"+chattest.Del(dir))
	m := r.approvalIn(thread)
	r.sl.WaitAck(r.sl.Click(mallory, channel, m.TS, buttonID(t, m, "Approve once")), wait)
	r.sl.WaitEphemeral(mallory.ID, "You cannot answer request", wait)
	ds, _ := r.host.DB.Decisions(context.Background(), store.AuditFilter{Verdict: audit.VerdictRefused})
	if len(ds) != 1 || ds[0].By != "slack:UMALLORY (mallory)" {
		t.Fatalf("refusal audit: %+v", ds)
	}
	// A message from another app in the thread is never listened to.
	r.sl.SayAsBot(channel, thread, "/approve")

	r.sl.WaitAck(r.sl.Click(alice, channel, m.TS, buttonID(t, m, "Deny with reason…")), wait)
	var v slacktest.View
	r.sl.Wait("the reason modal", wait, func(s *slacktest.Server) bool {
		vs := s.Views()
		if len(vs) == 1 {
			v = vs[0]
			return true
		}
		return false
	})
	if len(v.Inputs) != 1 || !v.Inputs[0].Optional || v.Inputs[0].Type != "plain_text_input" {
		t.Fatalf("reason modal: %+v", v)
	}
	ack := r.sl.WaitAck(r.sl.Submit(alice, v, map[string]string{"reason": "use the archive job"}), wait)
	if string(ack) != "null" {
		t.Fatalf("submission ack: %s", ack)
	}
	r.waitEdited(m.TS, "Denied by slack:UALICE (alice) on slack: use the archive job")
	if !chattest.Exists(dir) {
		t.Fatal("the denied command ran")
	}
	if got, _ := r.host.Request(context.Background(), requestID(t, m)); got.Reason != "use the archive job" {
		t.Fatalf("reason: %+v", got)
	}
}

func requestID(t testing.TB, m slacktest.Message) string {
	t.Helper()
	return chattest.RequestID(t, m.Text)
}

// TestFormModal: an MCP server's question in a Slack thread opens a
// modal with typed inputs; a bad value keeps the modal open with the
// error beside its input; a good one answers.
func TestFormModal(t *testing.T) {
	r := newRig(t)
	thread := r.sl.Say(channel, "", alice, mention+"hello")
	o := chattest.Owner(t, r.core, slack.Name, chat.Conv{Chat: channel, Thread: thread}, alice.ID)
	schema := json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer","maximum":5},"color":{"type":"string","enum":["red","blue"]},"ok":{"type":"boolean"}},"required":["count"]}`)
	done := chattest.Elicit(t, r.host, o, "<!channel> how many?", schema)
	var m slacktest.Message
	r.sl.Wait("the question", wait, func(s *slacktest.Server) bool {
		for _, x := range s.Messages(channel) {
			if x.User == "" && x.Thread == thread && strings.Contains(x.Text, "asks") {
				m = x
				return true
			}
		}
		return false
	})
	// The server's text is plain text: no @channel.
	if !strings.Contains(string(m.Blocks), `"type":"plain_text","text":"\u003c!channel\u003e how many?"`) {
		t.Fatalf("the server's message was not plain text: %s", m.Blocks)
	}
	r.sl.WaitAck(r.sl.Click(alice, channel, m.TS, buttonID(t, m, "Fill in…")), wait)
	var v slacktest.View
	r.sl.Wait("the form", wait, func(s *slacktest.Server) bool {
		if vs := s.Views(); len(vs) == 1 {
			v = vs[0]
			return true
		}
		return false
	})
	types := []string{}
	for _, in := range v.Inputs {
		types = append(types, in.Type)
	}
	if strings.Join(types, ",") != "plain_text_input,static_select,checkboxes" {
		t.Fatalf("inputs: %+v", v.Inputs)
	}
	ack := r.sl.WaitAck(r.sl.Submit(alice, v, map[string]string{"f0": "9", "f1": "blue", "f2": "true"}), wait)
	if !strings.Contains(string(ack), `"response_action":"errors"`) || !strings.Contains(string(ack), `"f0"`) || !strings.Contains(string(ack), "at most 5") {
		t.Fatalf("bad value ack: %s", ack)
	}
	r.sl.WaitAck(r.sl.Submit(alice, v, map[string]string{"f0": "4", "f1": "blue", "f2": "true"}), wait)
	req := <-done
	if req.State != store.Answered || string(req.Content) != `{"color":"blue","count":4,"ok":true}` {
		t.Fatalf("answer: %+v %s", req, req.Content)
	}
}
