package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/audit"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/surface/discord/discordtest"
	"github.com/wardenhq/warden/internal/surface/slack/slacktest"
	"github.com/wardenhq/warden/internal/surface/telegram/telegramtest"
)

const chatWait = 30 * time.Second

// TestStory000_DiscordFormAcrossCron is the reference system's bug as a
// story on a real host (SQLite, a real model protocol, a stdio MCP
// server, the Discord adapter against a fake Discord speaking the
// gateway and REST protocols): a chat user talks to the agent in a
// Discord channel; a cron run is denied between two of their messages;
// then the chat user's agent calls an MCP tool whose server asks a
// question, and the question shows in the Discord channel — a button
// that opens a Discord modal — not on a terminal; the modal's answer
// completes the tool call, and no question was put to anyone else.
func TestStory000_DiscordFormAcrossCron(t *testing.T) {
	const token = "MTEST.story000.discord"
	dc := discordtest.New(t, token)
	model := llmtest.New(t, chatModel)
	server, _ := json.Marshal(mcptest.Command(mcptest.Legacy))
	alice := discordtest.User{ID: "930000000000000001", Name: "alice"}
	const channel = "910000000000000123"
	cfg := newConfig(t)
	cfg.Environ = append(cfg.Environ, "DISCORD_TOKEN="+token)
	writeConfig(t, cfg, storyConf(model.URL(), server)+fmt.Sprintf(`chat:
  discord:
    enabled: true
    token_env: DISCORD_TOKEN
    api_url: %s
    approvers: {users: ["%s"]}
`, dc.URL(), alice.ID))
	reqs := &requestLog{}
	cfg.wrap = func(s store.Store) store.Store { reqs.Store = s; return reqs }
	th := startHost(t, cfg)
	ctx := t.Context()
	if !strings.Contains(th.out.String(), "chat:    discord (token $DISCORD_TOKEN; approvers 1 user(s)") {
		t.Fatalf("banner:\n%s", th.out.String())
	}
	if strings.Contains(th.out.String(), token) {
		t.Fatal("the token is in serve's output")
	}
	dc.Wait("the gateway session", chatWait, func(s *discordtest.Server) bool { return s.Ready() })

	// First message: the agent answers in the channel.
	dc.Say(channel, false, alice, "hello there", true)
	dc.WaitMessage(channel, "I do not know what to do with", chatWait)

	// A cron run between the two messages, denied under cron_mode.
	target := filepath.Join(t.TempDir(), "reports")
	mkdir(t, target)
	if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{Name: "nightly", Every: "1h", Overlap: "allow", Prompt: "CRON-DANGER " + target}); err != nil {
		t.Fatal(err)
	}
	run, err := th.client.RunCronJob(ctx, "nightly")
	if err == nil {
		run, err = th.client.CronRun(ctx, run.ID, true)
	}
	if err != nil || run.Status != store.RunSucceeded || !strings.Contains(run.Steps[0].Output, "result: BLOCKED") {
		t.Fatalf("cron run: %+v %v", run, err)
	}

	// Second message: the agent's MCP tool asks; the question is in the
	// Discord channel, and Fill in opens a modal.
	dc.Say(channel, false, alice, "WEB tidy the reports", true)
	q := dc.WaitMessage(channel, "MCP server “files” asks", chatWait)
	iid := dc.Click(alice, q.ID, discordButton(t, q, "Fill in…"))
	if resp := dc.WaitResponse(iid, chatWait); resp.Type != 9 {
		t.Fatalf("Fill in did not open a modal: %d %s", resp.Type, resp.Data)
	}
	md := dc.Modals()[0]
	values := map[string]string{}
	for _, in := range md.Inputs {
		switch in.Label {
		case "confirm":
			values[in.CustomID] = "yes"
		case "note":
			values[in.CustomID] = "from discord"
		}
	}
	if len(values) != 2 {
		t.Fatalf("modal inputs: %+v", md.Inputs)
	}
	dc.WaitResponse(dc.Submit(alice, md, values), chatWait)
	dc.WaitMessage(channel, "result: accepted: confirm=true note=from discord", chatWait)
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the cron run's denied command ran: %v", err)
	}
	var asked []string
	for _, o := range reqs.created() {
		asked = append(asked, o)
		if !strings.HasPrefix(o, "gateway:discord/"+channel+"/"+alice.ID) {
			t.Errorf("a question was put to %s", o)
		}
	}
	if len(asked) != 1 {
		t.Errorf("questions: %v, want the Discord one only", asked)
	}
}

// chatModel is storyModel for a conversation that goes on: what it does
// depends on the latest user message, not the first.
func chatModel(r llmtest.Request) llmtest.Reply {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" {
			msgs := append([]llmtest.Message{m}, r.Messages[i+1:]...)
			return storyModel(llmtest.Request{Messages: msgs})
		}
	}
	return storyModel(r)
}

// telegramConfig is a host config whose Telegram surface talks to a
// fake Telegram with bot token; user 42 approves; questions wait timeout
// seconds.
func telegramConfig(t *testing.T, token string, timeout int) (*telegramtest.Server, Config) {
	t.Helper()
	tg := telegramtest.New(t, token)
	cfg := newConfig(t)
	cfg.Environ = append(cfg.Environ, "TG_TOKEN="+token)
	writeConfig(t, cfg, fmt.Sprintf(`approvals:
  timeout: %d
chat:
  telegram:
    enabled: true
    token_env: TG_TOKEN
    api_url: %s
    approvers: {users: [42]}
`, timeout, tg.Endpoint()))
	return tg, cfg
}

func discordButton(t *testing.T, m discordtest.Message, label string) string {
	t.Helper()
	for _, b := range m.Buttons {
		if b.Label == label {
			return b.CustomID
		}
	}
	t.Fatalf("no button %q on %q", label, m.Content)
	return ""
}

// TestSlackThreadsApartOnAHost: two Slack threads run dangerous
// commands at once on a real host; each sees only its own approval,
// approving one runs only that one, and denying the other never runs it.
func TestSlackThreadsApartOnAHost(t *testing.T) {
	const bot, app = "xoxb-host-test", "xapp-host-test"
	sl := slacktest.New(t, bot, app)
	alice := slacktest.User{ID: "UALICE", Name: "alice"}
	cfg := newConfig(t)
	cfg.Environ = append(cfg.Environ, "SLACK_BOT="+bot, "SLACK_APP="+app)
	// The approved command deletes one of these: the sandbox must let it.
	base := t.TempDir()
	dirA, dirB := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeConfig(t, cfg, fmt.Sprintf(`approvals:
  timeout: 600
sandbox:
  writable: [`+base+`]
chat:
  slack:
    enabled: true
    token_env: SLACK_BOT
    app_token_env: SLACK_APP
    api_url: %s
    approvers: {users: [UALICE]}
`, sl.APIURL()))
	startHost(t, cfg)
	sl.Wait("connected", chatWait, func(s *slacktest.Server) bool { return s.Connected() })
	mkdir(t, dirA)
	mkdir(t, dirB)
	var threads [2]string
	var wg sync.WaitGroup
	for i, d := range []string{dirA, dirB} {
		wg.Go(func() { threads[i] = sl.Say("C1", "", alice, "<@"+slacktest.BotUID+"> !"+del(d)) })
	}
	wg.Wait()
	approval := func(thread string) slacktest.Message {
		var got slacktest.Message
		sl.Wait("the approval in "+thread, chatWait, func(s *slacktest.Server) bool {
			for _, m := range s.Messages("C1") {
				if m.User == "" && m.Thread == thread && strings.Contains(m.Text, "Approval needed") {
					got = m
					return true
				}
			}
			return false
		})
		return got
	}
	a, b := approval(threads[0]), approval(threads[1])
	if !strings.Contains(a.Text, del(dirA)) || strings.Contains(a.Text, del(dirB)) || !strings.Contains(b.Text, del(dirB)) || strings.Contains(b.Text, del(dirA)) {
		t.Fatalf("approvals crossed:\n%q\n%q", a.Text, b.Text)
	}
	id := func(m slacktest.Message, label string) string {
		for _, x := range m.Actions {
			if x.Label == label {
				return x.ID
			}
		}
		t.Fatalf("no %q on %q", label, m.Text)
		return ""
	}
	sl.WaitAck(sl.Click(alice, "C1", a.TS, id(a, "Approve once")), chatWait)
	waitFor(t, "thread A's command", func() bool { _, err := os.Stat(dirA); return err != nil })
	sl.WaitAck(sl.Click(alice, "C1", b.TS, id(b, "Deny")), chatWait)
	sl.Wait("B denied", chatWait, func(s *slacktest.Server) bool {
		m, _ := s.Get("C1", b.TS)
		return strings.Contains(m.Text, "Denied")
	})
	if _, err := os.Stat(dirB); err != nil {
		t.Fatalf("the denied command of thread B ran: %v", err)
	}
}

// TestTelegramStaleAndRefusedOnAHost: on a real host, an unlisted user's
// press is refused privately and audited; after the request expired its
// message says so, and a press on its old button does nothing and says
// so.
func TestTelegramStaleAndRefusedOnAHost(t *testing.T) {
	tg, cfg := telegramConfig(t, "42:host-telegram", 2)
	th := startHost(t, cfg)
	alice := telegramtest.User{ID: 42, First: "Alice", UserName: "alice"}
	mallory := telegramtest.User{ID: 66, First: "Mallory", UserName: "mallory"}
	dir := filepath.Join(t.TempDir(), "reports")
	mkdir(t, dir)
	tg.Wait("polling", chatWait, func(s *telegramtest.Server) bool { return s.Calls("getUpdates") > 0 })
	tg.Say(-100, 0, alice, "!"+del(dir))
	m := tg.WaitMessage(-100, "Approval needed", chatWait)
	var once string
	for _, b := range m.Buttons() {
		if b.Text == "Approve once" {
			once = b.Data
		}
	}
	q := tg.Click(mallory, m.ID, once)
	tg.Wait("the refusal", chatWait, func(s *telegramtest.Server) bool {
		for _, a := range s.Answers() {
			if a.Query == q && a.Alert && strings.Contains(a.Text, "You cannot answer") {
				return true
			}
		}
		return false
	})
	ds, err := th.st.Decisions(t.Context(), store.AuditFilter{Verdict: audit.VerdictRefused})
	if err != nil || len(ds) != 1 || ds[0].By != "telegram:66 (mallory)" || ds[0].Session != "telegram:-100" {
		t.Fatalf("refusal audit: %+v %v", ds, err)
	}
	tg.Wait("the expiry on the message", chatWait, func(s *telegramtest.Server) bool {
		x, _ := s.Message(m.ID)
		return strings.Contains(x.Text, "Expired") && len(x.Buttons()) == 0
	})
	q = tg.Click(alice, m.ID, once)
	tg.Wait("the stale press answered", chatWait, func(s *telegramtest.Server) bool {
		for _, a := range s.Answers() {
			if a.Query == q && strings.Contains(a.Text, "Nothing pending") && strings.Contains(a.Text, "had expired") {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("an expired or refused request ran: %v", err)
	}
}

// chatChannel is a live answer channel for a neighbour broker's owner.
type chatChannel struct{}

func (chatChannel) Surface() string { return "telegram" }

// TestChatRestartRepostsOnce: a Telegram session's request held by a
// live neighbour broker on the same store (another host sharing it) is
// posted once by the host; restarting the host does not post it again;
// a press after the restart answers it. The host's own request pending
// at shutdown has its message edited to say it was withdrawn.
func TestChatRestartRepostsOnce(t *testing.T) {
	tg, cfg := telegramConfig(t, "43:restart", 600)
	alice := telegramtest.User{ID: 42, First: "Alice", UserName: "alice"}
	th := startHost(t, cfg)
	tg.Wait("polling", chatWait, func(s *telegramtest.Server) bool { return s.Calls("getUpdates") > 0 })

	// The host's own request, pending when the host stops.
	dir := filepath.Join(t.TempDir(), "reports")
	mkdir(t, dir)
	tg.Say(-100, 0, alice, "!"+del(dir))
	own := tg.WaitMessage(-100, "Approval needed", chatWait)

	// A neighbour broker (alive: this process) on the same database.
	db, err := sqlite.Open(t.Context(), filepath.Join(cfg.StateDir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	nb := broker.New(broker.Options{Requests: db, Host: "neighbour." + fmt.Sprint(os.Getpid()), Timeout: time.Hour})
	defer nb.Close(context.Background(), "test over")
	o, _ := owner.Gateway("telegram", "-200", "42")
	o, _ = o.WithSession("telegram:-200")
	o, _ = o.WithChannel(chatChannel{})
	asked := make(chan store.Request, 1)
	go func() {
		r, err := nb.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewShell("rm -rf /srv/neighbour"), Rule: "t", Classes: []string{"delete.recursive"}})
		if err != nil {
			t.Error(err)
		}
		asked <- r
	}()
	var req store.Request
	waitFor(t, "the neighbour's request", func() bool {
		ps, _ := db.PendingRequests(t.Context(), "telegram:-200")
		if len(ps) == 1 {
			req = ps[0]
			return true
		}
		return false
	})
	posts := func() int {
		n := 0
		for _, m := range tg.Messages(-200) {
			if m.From.ID == telegramtest.BotID && strings.Contains(m.Text, "Approval needed — request "+req.ID) {
				n++
			}
		}
		return n
	}
	tg.Wait("the neighbour's request posted", chatWait, func(*telegramtest.Server) bool { return posts() == 1 })

	th.stop(t)
	tg.Wait("the host's own request withdrawn on its message", chatWait, func(s *telegramtest.Server) bool {
		x, _ := s.Message(own.ID)
		return strings.Contains(x.Text, "Withdrawn (host shutting down)") && len(x.Buttons()) == 0
	})
	th = startHost(t, cfg)
	tg.Wait("polling again", chatWait, func(s *telegramtest.Server) bool { return s.Calls("getUpdates") > 2 })
	// Give the restarted host's reconciliation its chance to (wrongly)
	// post again: wait until it answered a /pending in that chat, which
	// it handles after its first reconciliation.
	tg.Say(-200, 0, alice, "/pending")
	tg.WaitMessage(-200, "1 pending", chatWait)
	if n := posts(); n != 1 {
		t.Fatalf("the request was posted %d times", n)
	}
	var m telegramtest.Message
	for _, x := range tg.Messages(-200) {
		if strings.Contains(x.Text, "request "+req.ID) && len(x.Buttons()) > 0 {
			m = x
		}
	}
	var deny string
	for _, b := range m.Buttons() {
		if b.Text == "Deny" {
			deny = b.Data
		}
	}
	tg.Click(alice, m.ID, deny)
	var r store.Request
	waitFor(t, "the press after the restart", func() bool {
		r, _ = th.st.GetRequest(t.Context(), req.ID)
		return r.State != store.Pending
	})
	if r.State != store.Denied || r.By != "telegram:42 (alice)" {
		t.Fatalf("the press after the restart: %+v", r)
	}
	// Hosts sharing a store wake each other's waiters (broker.Wake).
	nb.Wake(t.Context(), req.ID)
	if got := <-asked; got.State != store.Denied {
		t.Fatalf("the neighbour's asker got %+v", got)
	}
}

// del is a command deleting dir that the gate asks about: a recursive
// delete named relative to its parent (a delete of an absolute path
// under the temporary directory is not dangerous).
// del deletes dir and a relative ./.scratch: dir alone, under /tmp, would
// be a temporary delete not worth asking about; the relative operand is
// the project's own, so the whole is a recursive delete to ask about.
func del(dir string) string { return "rm -rf ./.scratch " + dir }
