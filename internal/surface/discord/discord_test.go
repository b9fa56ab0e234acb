package discord_test

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
	"github.com/wardenhq/warden/internal/surface/discord"
	"github.com/wardenhq/warden/internal/surface/discord/discordtest"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	token   = "MTEST.discord.bot-token-do-not-log"
	channel = "910000000000000777"
	wait    = 20 * time.Second
	roleOps = "920000000000000001"
)

var (
	alice   = discordtest.User{ID: "930000000000000001", Name: "alice", Roles: []string{roleOps}}
	mallory = discordtest.User{ID: "930000000000000066", Name: "mallory"}
)

type rig struct {
	t    testing.TB
	dc   *discordtest.Server
	host *surfacetest.Host
	core *chat.Core
}

func newRig(t testing.TB) *rig {
	t.Helper()
	dc := discordtest.New(t, token)
	h := surfacetest.New(t, surfacetest.Options{})
	ad, err := discord.New(discord.Options{Token: token, APIBase: dc.URL(), Logger: surfacetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	core, _ := chattest.Core(t, ad, h, chat.Access{Rights: chat.Rights{Approvers: chat.Allow{Roles: []string{roleOps}}}})
	dc.Wait("gateway ready", wait, func(s *discordtest.Server) bool { return s.Ready() })
	return &rig{t: t, dc: dc, host: h, core: core}
}

func button(t testing.TB, m discordtest.Message, label string) string {
	t.Helper()
	for _, b := range m.Buttons {
		if b.Label == label {
			return b.CustomID
		}
	}
	t.Fatalf("no button %q on %q: %v", label, m.Content, m.Buttons)
	return ""
}

func (r *rig) waitEdited(id, sub string) discordtest.Message {
	r.t.Helper()
	var got discordtest.Message
	r.dc.Wait("message "+id+" edited to "+sub, wait, func(s *discordtest.Server) bool {
		m, ok := s.Get(id)
		got = m
		return ok && m.Edits > 0 && strings.Contains(m.Content, sub)
	})
	return got
}

// askDelete has alice ask in the channel to delete a new target
// directory; it returns the directory and the approval message.
func (r *rig) askDelete() (string, discordtest.Message) {
	r.t.Helper()
	dir := chattest.Target(r.t, r.host)
	r.dc.Say(channel, false, alice, "!"+chattest.Del(dir), false)
	return dir, r.dc.WaitMessage(channel, "Approval needed", wait)
}

// waitEphemeral waits for what: an ephemeral message in the channel
// containing sub.
func (r *rig) waitEphemeral(what, sub string) discordtest.Message {
	r.t.Helper()
	var got discordtest.Message
	r.dc.Wait(what, wait, func(s *discordtest.Server) bool {
		for _, x := range s.Messages(channel) {
			if x.Ephemeral && strings.Contains(x.Content, sub) {
				got = x
				return true
			}
		}
		return false
	})
	return got
}

func ephemeral(t *testing.T, resp discordtest.Response) string {
	t.Helper()
	var d struct {
		Content string `json:"content"`
		Flags   int    `json:"flags"`
	}
	_ = json.Unmarshal(resp.Data, &d)
	if resp.Type != 4 || d.Flags&64 == 0 {
		t.Fatalf("want an ephemeral reply, got type %d %s", resp.Type, resp.Data)
	}
	return d.Content
}

// TestApprove: the gateway identify carries the intents; a "!cmd" becomes
// an approval message that can ping nobody; an unlisted member's press
// and a webhook's command are refused; a member with the approver role
// approves with a press, which updates the message in the response.
func TestApprove(t *testing.T) {
	r := newRig(t)
	if _, intents := r.dc.Identified(); intents&int(discord.Intents) != int(discord.Intents) {
		t.Fatalf("identify intents %b, want %b", intents, discord.Intents)
	}
	dir, m := r.askDelete()
	if !strings.Contains(m.Content, "```\n"+chattest.Del(dir)+"\n```") || !noPings(m) {
		t.Fatalf("approval message: %q mentions %s", m.Content, m.Mentions)
	}
	resp := r.dc.WaitResponse(r.dc.Click(mallory, m.ID, button(t, m, "Approve once")), wait)
	if !strings.Contains(ephemeral(t, resp), "You cannot answer request") {
		t.Fatalf("refusal: %s", resp.Data)
	}
	r.dc.SayWebhook(channel, alice, "/approve")
	ds, _ := r.host.DB.Decisions(context.Background(), store.AuditFilter{Verdict: audit.VerdictRefused})
	if len(ds) != 1 || ds[0].By != "discord:930000000000000066 (mallory)" {
		t.Fatalf("refusal audit: %+v", ds)
	}
	resp = r.dc.WaitResponse(r.dc.Click(alice, m.ID, button(t, m, "Approve once")), wait)
	if resp.Type != 7 {
		t.Fatalf("approval response type %d: %s", resp.Type, resp.Data)
	}
	got := r.waitEdited(m.ID, "Approved once by discord:930000000000000001 \\(alice\\)")
	if len(got.Buttons) != 0 {
		t.Fatalf("buttons left: %v", got.Buttons)
	}
	r.dc.WaitMessage(channel, "Ran \\(exit 0\\)", wait)
	if chattest.Exists(dir) {
		t.Fatal("the approved command did not run")
	}
}

// TestReasonModal: Deny with reason opens a modal; its submission denies
// with the reason and updates the message.
func TestReasonModal(t *testing.T) {
	r := newRig(t)
	dir, m := r.askDelete()
	if resp := r.dc.WaitResponse(r.dc.Click(alice, m.ID, button(t, m, "Deny with reason…")), wait); resp.Type != 9 {
		t.Fatalf("want a modal, got %d %s", resp.Type, resp.Data)
	}
	md := r.dc.Modals()[0]
	resp := r.dc.WaitResponse(r.dc.Submit(alice, md, map[string]string{"reason": "ask ops first"}), wait)
	if resp.Type != 7 {
		t.Fatalf("submission response %d %s", resp.Type, resp.Data)
	}
	r.waitEdited(m.ID, "Denied by discord:930000000000000001 \\(alice\\) on discord: ask ops first")
	r.dc.WaitMessage(channel, "Not run", wait)
	if !chattest.Exists(dir) {
		t.Fatal("the denied command ran")
	}
}

// TestFormPages: an MCP server's form of seven fields is two modals of
// at most five inputs; a refused value comes back privately with a
// button to fill the page in again (with what was typed), and the
// second page follows a Continue button.
func TestFormPages(t *testing.T) {
	r := newRig(t)
	o := chattest.Owner(t, r.core, discord.Name, chat.Conv{Chat: channel}, alice.ID)
	schema := json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string"},"b":{"type":"integer","maximum":3},"c":{"type":"string"},"d":{"type":"string"},
		"e":{"type":"string"},"f":{"type":"boolean"},"g":{"type":"string","enum":["x","y"]}},"required":["a","b"]}`)
	done := chattest.Elicit(t, r.host, o, "@everyone fill this", schema)
	m := r.dc.WaitMessage(channel, "asks", wait)
	if !noPings(m) {
		t.Fatalf("a server's @everyone could ping: %s", m.Mentions)
	}
	r.dc.WaitResponse(r.dc.Click(alice, m.ID, button(t, m, "Fill in…")), wait)
	p1 := r.dc.Modals()[0]
	if len(p1.Inputs) != 5 || !strings.Contains(p1.Title, "(1/2)") {
		t.Fatalf("page 1: %+v", p1)
	}
	resp := r.dc.WaitResponse(r.dc.Submit(alice, p1, map[string]string{"f0": "hello", "f1": "7"}), wait)
	if text := ephemeral(t, resp); !strings.Contains(text, "at most 3") {
		t.Fatalf("refused value: %q", text)
	}
	retry := r.waitEphemeral("the retry message", "at most 3")
	r.dc.WaitResponse(r.dc.Click(alice, retry.ID, button(t, retry, "Fill in again")), wait)
	again := r.dc.Modals()[1]
	if again.Inputs[0].Value != "hello" || again.Inputs[1].Value != "7" {
		t.Fatalf("the page was not prefilled with what was typed: %+v", again.Inputs)
	}
	resp = r.dc.WaitResponse(r.dc.Submit(alice, again, map[string]string{"f0": "hello", "f1": "2"}), wait)
	if text := ephemeral(t, resp); !strings.Contains(text, "Saved page 1 of 2") {
		t.Fatalf("page 1 saved: %q", text)
	}
	cont := r.waitEphemeral("the continue message", "Saved page 1 of 2")
	r.dc.WaitResponse(r.dc.Click(alice, cont.ID, button(t, cont, "Continue")), wait)
	p2 := r.dc.Modals()[2]
	if len(p2.Inputs) != 2 || p2.Inputs[0].Placeholder != "yes or no" {
		t.Fatalf("page 2: %+v", p2)
	}
	r.dc.WaitResponse(r.dc.Submit(alice, p2, map[string]string{"f5": "yes", "f6": "Y"}), wait)
	req := <-done
	if req.State != store.Answered || string(req.Content) != `{"a":"hello","b":2,"f":true,"g":"y"}` {
		t.Fatalf("answer: %+v %s", req, req.Content)
	}
}

// noPings reports whether a message's allowed mentions allow none.
func noPings(m discordtest.Message) bool {
	var am struct {
		Parse *[]string `json:"parse"`
		Users []string  `json:"users"`
		Roles []string  `json:"roles"`
	}
	return json.Unmarshal(m.Mentions, &am) == nil && am.Parse != nil && len(*am.Parse) == 0 && len(am.Users) == 0 && len(am.Roles) == 0
}
