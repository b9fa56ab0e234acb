package telegram_test

import (
	"context"
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/audit"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/chattest"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
	"github.com/wardenhq/warden/internal/surface/telegram"
	"github.com/wardenhq/warden/internal/surface/telegram/telegramtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	token = "123456:test-token-do-not-log"
	group = int64(-1001)
	wait  = 20 * time.Second
)

var (
	alice   = telegramtest.User{ID: 42, First: "Alice", UserName: "alice"}
	mallory = telegramtest.User{ID: 66, First: "Mallory", UserName: "mallory"}
	admin   = telegramtest.User{ID: 7, First: "Ada", UserName: "ada"}
	robot   = telegramtest.User{ID: 99, IsBot: true, First: "Robot", UserName: "robot_bot"}
)

// rig is a chat core on the Telegram adapter against the fake, on a
// host of real parts.
type rig struct {
	t    testing.TB
	tg   *telegramtest.Server
	host *surfacetest.Host
	core *chat.Core
	stop func()
}

type rigOptions struct {
	timeout time.Duration
	host    *surfacetest.Host
	tg      *telegramtest.Server
}

func newRig(t testing.TB, ro rigOptions) *rig {
	t.Helper()
	tg := ro.tg
	if tg == nil {
		tg = telegramtest.New(t, token)
	}
	h := ro.host
	if h == nil {
		h = surfacetest.New(t, surfacetest.Options{Timeout: ro.timeout})
	}
	ad, err := telegram.New(telegram.Options{Token: token, Endpoint: tg.Endpoint(), PollTimeout: 2 * time.Second, Logger: surfacetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	core, stop := chattest.Core(t, ad, h, chat.Access{Rights: chat.Rights{
		Approvers: chat.Allow{Users: []string{"42"}},
		Admins:    chat.Allow{Users: []string{"7"}},
	}})
	r := &rig{t: t, tg: tg, host: h, core: core, stop: stop}
	tg.Wait("connected", wait, func(s *telegramtest.Server) bool { return s.Calls("getUpdates") > 0 })
	return r
}

// button finds a button of m by label.
func button(t testing.TB, m telegramtest.Message, label string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if b.Text == label {
			return b.Data
		}
	}
	t.Fatalf("no button %q on %q: %v", label, m.Text, m.Buttons())
	return ""
}

// requestOf reads the request id out of an approval message.
func (r *rig) requestOf(m telegramtest.Message) store.Request {
	r.t.Helper()
	req, err := r.host.Request(context.Background(), chattest.RequestID(r.t, m.Text))
	if err != nil {
		r.t.Fatal(err)
	}
	return req
}

func (r *rig) waitEdited(id int, sub string) telegramtest.Message {
	r.t.Helper()
	var got telegramtest.Message
	r.tg.Wait("message "+strconv.Itoa(id)+" edited to "+strconv.Quote(sub), wait, func(s *telegramtest.Server) bool {
		m, ok := s.Message(id)
		got = m
		return ok && m.Edits > 0 && strings.Contains(m.Text, sub)
	})
	return got
}

// askDelete has alice ask in the group to delete a new target
// directory; it returns the directory and the approval message.
func (r *rig) askDelete() (string, telegramtest.Message) {
	r.t.Helper()
	dir := chattest.Target(r.t, r.host)
	r.tg.Say(group, 0, alice, "!"+chattest.Del(dir))
	return dir, r.tg.WaitMessage(group, "Approval needed", wait)
}

func (r *rig) answer(q string) telegramtest.CallbackAnswer {
	r.t.Helper()
	var got telegramtest.CallbackAnswer
	r.tg.Wait("answer to "+q, wait, func(s *telegramtest.Server) bool {
		for _, a := range s.Answers() {
			if a.Query == q {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

// TestApproveOnce: a "!cmd" in a group becomes an approval message with
// the command as it will run; the approver's press runs it, and the
// message is edited to say who approved, with no button left.
func TestApproveOnce(t *testing.T) {
	r := newRig(t, rigOptions{})
	dir, m := r.askDelete()
	if !strings.Contains(m.Text, "<pre>"+html.EscapeString(chattest.Del(dir))+"</pre>") || !strings.Contains(m.Text, "delete.recursive") || !strings.Contains(m.Text, "gateway:telegram/-1001/42") {
		t.Fatalf("approval message: %q", m.Text)
	}
	var labels []string
	for _, b := range m.Buttons() {
		labels = append(labels, b.Text)
	}
	if strings.Join(labels, ",") != "Approve once,This session,Always,Deny" {
		t.Fatalf("buttons: %v", labels)
	}
	req := r.requestOf(m)
	if req.Session != "telegram:-1001" || req.State != store.Pending {
		t.Fatalf("request: %+v", req)
	}
	q := r.tg.Click(alice, m.ID, button(t, m, "Approve once"))
	edited := r.waitEdited(m.ID, "Approved once by telegram:42 (alice)")
	if len(edited.Buttons()) != 0 {
		t.Fatalf("buttons left after the answer: %v", edited.Buttons())
	}
	r.answer(q)
	r.tg.WaitMessage(group, "Ran (exit 0)", wait)
	if chattest.Exists(dir) {
		t.Fatal("the approved command did not run")
	}
	got, _ := r.host.Request(context.Background(), req.ID)
	if got.State != store.Answered || got.Scope != store.Once || got.By != "telegram:42 (alice)" || got.Surface != "telegram" {
		t.Fatalf("request ended %+v", got)
	}
}

// TestRefusedAndAudited: an unlisted user's press and a bot's are
// refused privately and audited; the request stays pending and nothing
// runs; an approver then denies with a reason, which reaches the
// command's result.
func TestRefusedAndAudited(t *testing.T) {
	r := newRig(t, rigOptions{})
	dir, m := r.askDelete()
	req := r.requestOf(m)

	for _, u := range []telegramtest.User{mallory, robot} {
		q := r.tg.Click(u, m.ID, button(t, m, "Approve once"))
		a := r.answer(q)
		if !a.Alert || !strings.Contains(a.Text, "You cannot answer request") {
			t.Fatalf("refusal for %s: %+v", u.UserName, a)
		}
	}
	// The admin-only "always" is refused to a mere approver too.
	q := r.tg.Click(alice, m.ID, button(t, m, "Always"))
	if a := r.answer(q); !strings.Contains(a.Text, "takes an admin") {
		t.Fatalf("always by an approver: %+v", a)
	}
	if got, _ := r.host.Request(context.Background(), req.ID); got.State != store.Pending {
		t.Fatalf("a refused press ended the request: %+v", got)
	}
	ds, err := r.host.DB.Decisions(context.Background(), store.AuditFilter{Verdict: audit.VerdictRefused})
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, d := range ds {
		if d.RequestID != req.ID || d.Rule != audit.RuleAnswerRefused || d.Surface != "telegram" || d.Session != "telegram:-1001" {
			t.Fatalf("refusal record: %+v", d)
		}
		who = append(who, d.By+" ("+d.Reason+")")
	}
	want := []string{
		"telegram:66 (mallory) (not an approver in this chat)",
		"telegram:99 (robot_bot) (bots and webhooks cannot answer)",
		"telegram:42 (alice) (an always grant changes policy and takes an admin)",
	}
	if strings.Join(who, "|") != strings.Join(want, "|") {
		t.Fatalf("refusals audited:\n%s\nwant\n%s", strings.Join(who, "\n"), strings.Join(want, "\n"))
	}
	// A text command from the unlisted user is refused too (and audited).
	r.tg.Say(group, 0, mallory, "/approve")
	r.tg.Wait("the refused command audited", wait, func(*telegramtest.Server) bool {
		ds, _ := r.host.DB.Decisions(context.Background(), store.AuditFilter{Verdict: audit.VerdictRefused})
		return len(ds) == 4
	})
	if chattest.Exists(dir) == false {
		t.Fatal("a refused press ran the command")
	}

	r.tg.Say(group, 0, alice, "/deny not on a Friday")
	r.waitEdited(m.ID, "Denied by telegram:42 (alice) on telegram: not on a Friday")
	res := r.tg.WaitMessage(group, "Not run", wait)
	if !strings.Contains(res.Text, "not on a Friday") || !chattest.Exists(dir) {
		t.Fatalf("denied command: %q (dir exists: %v)", res.Text, chattest.Exists(dir))
	}
}

// TestStaleButton: after the request expired its message says so and has
// no buttons; a press on the old button (a client showing a stale
// message) does nothing and says so.
func TestStaleButton(t *testing.T) {
	r := newRig(t, rigOptions{timeout: time.Second})
	dir, m := r.askDelete()
	data := button(t, m, "Approve once")
	copyID := r.tg.Duplicate(m.ID) // a second post whose id warden never learnt
	r.waitEdited(m.ID, "Expired: nobody answered in time")
	q := r.tg.Click(alice, m.ID, data)
	a := r.answer(q)
	if !strings.Contains(a.Text, "Nothing pending") || !strings.Contains(a.Text, "had expired") || strings.Contains(strings.ToLower(a.Text), "approved") {
		t.Fatalf("stale press: %+v", a)
	}
	r.tg.WaitMessage(group, "Not run", wait)
	if !chattest.Exists(dir) {
		t.Fatal("an expired request ran")
	}
	// A press on the copy says so too, and edits the copy.
	r.answer(r.tg.Click(alice, copyID, data))
	if c := r.waitEdited(copyID, "Expired: nobody answered in time"); len(c.Buttons()) != 0 {
		t.Fatalf("the copy kept its buttons: %v", c.Buttons())
	}
}

// TestOutage: while the platform is down, a new request cannot be
// posted; it is posted once after the reconnection, and an outage never
// answers it.
func TestOutage(t *testing.T) {
	r := newRig(t, rigOptions{})
	_, m := r.askDelete()
	first := r.requestOf(m)
	// Down only once the post is recorded: a post the platform took but
	// whose answer was lost is posted again (see TestStaleButton).
	waitFor(t, "the post recorded", func() bool {
		p, err := r.host.DB.GetChatPost(context.Background(), "telegram", first.ID)
		return err == nil && p.Message != ""
	})

	r.tg.SetDown(true)
	// A second request while down: made directly, as the owner of the
	// conversation, since no message can arrive.
	o := ownerFor(t, r.core, group, "42")
	dir2 := chattest.Target(t, r.host)
	errc := make(chan error, 1)
	go func() {
		out := &strings.Builder{}
		_, err := r.host.Shell(context.Background(), o, chattest.Del(dir2), out, out)
		errc <- err
	}()
	var second store.Request
	waitFor(t, "the second request pending", func() bool {
		ps, _ := r.host.Pending(context.Background(), "telegram:-1001")
		if len(ps) == 2 {
			second = ps[1]
			return true
		}
		return false
	})
	r.tg.SetDown(false)
	m2 := r.tg.WaitMessage(group, second.ID, wait)
	if !strings.Contains(m2.Text, "Approval needed") {
		t.Fatalf("re-posted: %q", m2.Text)
	}
	// Each request was posted exactly once.
	count := map[string]int{}
	for _, x := range r.tg.Messages(group) {
		for _, id := range []string{first.ID, second.ID} {
			if x.From.ID == telegramtest.BotID && strings.Contains(x.Text, "Approval needed — request "+id) {
				count[id]++
			}
		}
	}
	if count[first.ID] != 1 || count[second.ID] != 1 {
		t.Fatalf("posts per request: %v", count)
	}
	for _, id := range []string{first.ID, second.ID} {
		if got, _ := r.host.Request(context.Background(), id); got.State != store.Pending {
			t.Fatalf("the outage ended %s: %+v", id, got)
		}
	}
	r.tg.Click(alice, m2.ID, button(t, m2, "Deny"))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !chattest.Exists(dir2) {
		t.Fatal("denied command ran")
	}
}

// TestRevokedToken: a revoked token is a failed connection retried with
// backoff; nothing is answered meanwhile, and the token is never in an
// error.
func TestRevokedToken(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.tg.Revoke(true)
	waitFor(t, "the adapter to notice", func() bool { return !r.core.Status().Connected && r.core.Status().Err != "" })
	st := r.core.Status()
	if strings.Contains(st.Err, token) || strings.Contains(st.Err, "test-token") {
		t.Fatalf("the token leaked into an error: %q", st.Err)
	}
	r.tg.Revoke(false)
	waitFor(t, "reconnected", func() bool { return r.core.Status().Connected && r.core.Status().Connections >= 2 })
}

func ownerFor(t testing.TB, core *chat.Core, chatID int64, user string) owner.Owner {
	t.Helper()
	return chattest.Owner(t, core, telegram.Name, chat.Conv{Chat: strconv.FormatInt(chatID, 10)}, user)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFormQuestionByQuestion: an MCP server's question in a Telegram
// session is asked field by field to the approver who pressed Fill in;
// a bad answer is asked again, a choice can be pressed, and the content
// reaches the request.
func TestFormQuestionByQuestion(t *testing.T) {
	r := newRig(t, rigOptions{})
	o := ownerFor(t, r.core, group, "42")
	schema := json.RawMessage(`{"type":"object","properties":{
		"count":{"type":"integer","title":"How many","minimum":1,"maximum":5},
		"color":{"type":"string","enum":["red","blue"]},
		"confirm":{"type":"boolean","title":"Sure?"},
		"note":{"type":"string"}},"required":["count","confirm"]}`)
	done := chattest.Elicit(t, r.host, o, "Tell me about the <b>reports</b>", schema)
	m := r.tg.WaitMessage(group, "MCP server “files” asks", wait)
	if !strings.Contains(m.Text, "Tell me about the &lt;b&gt;reports&lt;/b&gt;") {
		t.Fatalf("the server's text was not escaped: %q", m.Text)
	}
	// Someone else cannot fill it in.
	if a := r.answer(r.tg.Click(mallory, m.ID, button(t, m, "Fill in…"))); !strings.Contains(a.Text, "not an approver") {
		t.Fatalf("mallory's fill: %+v", a)
	}
	r.answer(r.tg.Click(alice, m.ID, button(t, m, "Fill in…")))
	r.tg.WaitMessage(group, "Question 1 of 4", wait)
	r.tg.Say(group, 0, alice, "9")
	r.tg.WaitMessage(group, "Not taken: How many: at most 5", wait)
	r.tg.Say(group, 0, mallory, "3") // not the one asked: ignored as an answer
	r.tg.Say(group, 0, alice, "3")
	q2 := r.tg.WaitMessage(group, "Question 2 of 4", wait)
	r.answer(r.tg.Click(alice, q2.ID, button(t, q2, "blue")))
	q3 := r.tg.WaitMessage(group, "Question 3 of 4", wait)
	r.answer(r.tg.Click(alice, q3.ID, button(t, q3, "Yes")))
	r.tg.WaitMessage(group, "Question 4 of 4", wait)
	r.tg.Say(group, 0, alice, "/skip")
	req := <-done
	if req.State != store.Answered || string(req.Content) != `{"color":"blue","confirm":true,"count":3}` || req.By != "telegram:42 (alice)" {
		t.Fatalf("answer: %+v %s", req, req.Content)
	}
	r.waitEdited(m.ID, "Answered by telegram:42 (alice)")
}

// TestAnsweredElsewhere: a request answered on another surface (the
// console) has its message edited to say so, by whom and where, with
// no button left.
func TestAnsweredElsewhere(t *testing.T) {
	r := newRig(t, rigOptions{})
	dir, m := r.askDelete()
	req := r.requestOf(m)
	if _, err := r.host.Answer(context.Background(), req.ID, surface.Answer{By: surface.Identity{Surface: "web", User: "token:ops"}, Reason: "use the job"}); err != nil {
		t.Fatal(err)
	}
	got := r.waitEdited(m.ID, "Denied by web:token:ops on web: use the job")
	if len(got.Buttons()) != 0 {
		t.Fatalf("buttons left: %v", got.Buttons())
	}
	if !chattest.Exists(dir) {
		t.Fatal("the denied command ran")
	}
}

// TestYolo: /yolo is an admin's; an approver's is refused and changes
// nothing; the admin's turns session yolo on for this chat alone.
func TestYolo(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx := context.Background()
	r.tg.Say(group, 0, alice, "/yolo on")
	r.tg.Wait("the refusal", wait, func(s *telegramtest.Server) bool {
		for _, m := range s.Messages(42) {
			if strings.Contains(m.Text, "warden admins can switch yolo") {
				return true
			}
		}
		return false
	})
	if on, _ := r.host.DB.SessionYolo(ctx, "telegram:-1001"); on {
		t.Fatal("an approver switched yolo on")
	}
	r.tg.Say(group, 0, admin, "/yolo on")
	r.tg.WaitMessage(group, "Yolo is ON for this session", wait)
	if on, _ := r.host.DB.SessionYolo(ctx, "telegram:-1001"); !on {
		t.Fatal("the admin's /yolo on did not hold")
	}
	if on, _ := r.host.DB.SessionYolo(ctx, "telegram:-1002"); on {
		t.Fatal("yolo leaked to another chat's session")
	}
	dir := chattest.Target(t, r.host)
	r.tg.Say(group, 0, alice, "!"+chattest.Del(dir))
	r.tg.WaitMessage(group, "Ran (exit 0)", wait)
	if chattest.Exists(dir) {
		t.Fatal("the command did not run under yolo")
	}
	for _, m := range r.tg.Messages(group) {
		if strings.Contains(m.Text, "Approval needed") {
			t.Fatalf("asked under yolo: %q", m.Text)
		}
	}
}
