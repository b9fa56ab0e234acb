// Package slacktest is a local fake of Slack for tests: the Web API
// methods warden's adapter uses (auth.test, apps.connections.open,
// chat.postMessage, chat.update, chat.postEphemeral, views.open) over
// real HTTP, and a Socket Mode WebSocket on a loopback port that says
// hello, pings, delivers events_api and interactive envelopes and
// expects each to be acknowledged by its envelope id. Test controls
// play users (messages, button presses, modal submissions) and outages.
//
// It checks what Slack checks and a careless adapter would get wrong:
// the bot token on Web API calls and the app token on
// apps.connections.open, Block Kit's bounds (header and section text,
// button text, action ids unique in a message, modal titles of at most
// 24 characters, input blocks), trigger ids used once, and messages
// updated only by their author.
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/wardenhq/warden/internal/surface/chattest"
)

// Identity of the fake workspace and bot.
const (
	TeamID = "T0WARDEN"
	BotUID = "UBOTWARDEN"
	BotID  = "BBOTWARDEN"
	AppID  = "A0WARDEN"
)

// User is a Slack user.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Message is a message in a fake channel.
type Message struct {
	Channel, TS, Thread string
	User                string // "" for the bot's
	Text                string // the message's visible text: blocks' texts, or the text of a user's message
	Actions             []Action
	Blocks              json.RawMessage
	Edits               int
	Ephemeral           string // the user an ephemeral message was for
	// At is when the message reached the server.
	At time.Time
}

// Action is a button.
type Action struct{ ID, Label string }

// View is an opened modal.
type View struct {
	ID, CallbackID, Metadata, Title, Trigger string
	Inputs                                   []Input
	Raw                                      json.RawMessage
}

// Input is one input block of a modal.
type Input struct {
	BlockID, ActionID, Type, Label string
	Optional                       bool
}

// Server is the fake.
type Server struct {
	chattest.Fake
	botToken, appToken string

	messages []*Message
	clock    int64
	views    []*View
	triggers map[string]bool // trigger id → used
	queue    []envelope
	acks     map[string]json.RawMessage
	conns    map[*websocket.Conn]bool
	current  *websocket.Conn
	opens    int
	nextEnv  int
	nextTrig int
	pingStop chan struct{}
	wg       sync.WaitGroup
}

type envelope struct {
	ID  string
	Raw []byte
}

// New starts a fake; it stops when the test ends.
func New(t testing.TB, botToken, appToken string) *Server {
	s := &Server{botToken: botToken, appToken: appToken, clock: 1700000000000000, triggers: map[string]bool{},
		acks: map[string]json.RawMessage{}, conns: map[*websocket.Conn]bool{}, pingStop: make(chan struct{})}
	s.Start(t, "slacktest", s.serve, s.Close, s.dump)
	s.wg.Go(s.pinger)
	return s
}

// APIURL is the Web API base for the adapter's APIURL option.
func (s *Server) APIURL() string { return s.Base() + "/api/" }

// Close stops the server.
func (s *Server) Close() {
	s.Mu.Lock()
	select {
	case <-s.pingStop:
	default:
		close(s.pingStop)
	}
	s.Down = true
	s.closeConnsLocked()
	s.Mu.Unlock()
	s.wg.Wait()
	s.Stop()
}

func (s *Server) closeConnsLocked() {
	for c := range s.conns {
		_ = c.Close()
	}
	s.current = nil
}

// SetDown makes every call and connection fail while down.
func (s *Server) SetDown(down bool) { s.Switch(&s.Down, down, s.closeConnsLocked) }

// Revoke makes both tokens invalid (invalid_auth), as after a revocation.
func (s *Server) Revoke(revoked bool) { s.Switch(&s.Revoked, revoked, s.closeConnsLocked) }

// ts returns a new, increasing message timestamp.
func (s *Server) tsLocked() string {
	s.clock += 100
	return fmt.Sprintf("%d.%06d", s.clock/1000000, s.clock%1000000)
}

// Opens returns how many Socket Mode connections were opened.
func (s *Server) Opens() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.opens
}

// Connected reports whether a Socket Mode connection is up.
func (s *Server) Connected() bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.current != nil
}

// Say delivers a message from u in channel (thread "" for a top-level
// message) and returns its ts.
func (s *Server) Say(channel, thread string, u User, text string) string {
	s.Mu.Lock()
	ts := s.tsLocked()
	s.messages = append(s.messages, &Message{Channel: channel, TS: ts, Thread: thread, User: u.ID, Text: text})
	ev := map[string]any{"type": "message", "channel": channel, "user": u.ID, "text": text, "ts": ts, "event_ts": ts,
		"channel_type": channelType(channel), "team": TeamID}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	s.Mu.Unlock()
	s.push("events_api", map[string]any{"token": "verif", "team_id": TeamID, "api_app_id": AppID, "type": "event_callback",
		"event_id": "Ev" + ts, "event_time": time.Now().Unix(), "event": ev})
	return ts
}

// SayAsBot delivers a message posted by another app (a bot message).
func (s *Server) SayAsBot(channel, thread, text string) {
	s.Mu.Lock()
	ts := s.tsLocked()
	s.Mu.Unlock()
	ev := map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "BOTHER", "channel": channel, "text": text, "ts": ts,
		"event_ts": ts, "channel_type": channelType(channel)}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	s.push("events_api", map[string]any{"token": "verif", "team_id": TeamID, "api_app_id": AppID, "type": "event_callback", "event": ev})
}

func channelType(ch string) string {
	if strings.HasPrefix(ch, "D") {
		return "im"
	}
	return "channel"
}

// Click presses button actionID on message ts of channel as u and
// returns the envelope id.
func (s *Server) Click(u User, channel, ts, actionID string) string {
	m := chattest.Pressed(&s.Fake, &s.messages, func(x *Message) bool { return x.Channel == channel && x.TS == ts }, channel+"/"+ts)
	s.nextTrig++
	trig := fmt.Sprintf("%d.trig%d", time.Now().Unix(), s.nextTrig)
	s.triggers[trig] = false
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": channel, "is_ephemeral": m.Ephemeral != ""}
	msg := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": BotUID, "bot_id": BotID, "blocks": m.Blocks}
	if m.Thread != "" {
		container["thread_ts"] = m.Thread
		msg["thread_ts"] = m.Thread
	}
	s.Mu.Unlock()
	payload := map[string]any{
		"type": "block_actions", "user": map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": TeamID},
		"api_app_id": AppID, "token": "verif", "container": container, "trigger_id": trig,
		"team": map[string]any{"id": TeamID}, "channel": map[string]any{"id": channel, "name": "warden"},
		"response_url": s.Base() + "/response", "actions": []map[string]any{{"action_id": actionID, "block_id": "b0", "value": actionID,
			"type": "button", "action_ts": strconv.FormatInt(time.Now().Unix(), 10)}},
	}
	if m.Ephemeral == "" {
		payload["message"] = msg
	}
	return s.push("interactive", payload)
}

// Submit submits modal v as u with values by block id (a choice's value,
// "true" to tick a checkbox) and returns the envelope id.
func (s *Server) Submit(u User, v View, values map[string]string) string {
	state := map[string]map[string]any{}
	for _, in := range v.Inputs {
		val, ok := values[in.BlockID]
		a := map[string]any{"type": in.Type}
		switch in.Type {
		case "static_select":
			if ok && val != "" {
				a["selected_option"] = map[string]any{"value": val, "text": map[string]any{"type": "plain_text", "text": val}}
			} else {
				a["selected_option"] = nil
			}
		case "checkboxes":
			opts := []map[string]any{}
			if val == "true" {
				opts = append(opts, map[string]any{"value": "true", "text": map[string]any{"type": "plain_text", "text": "Yes"}})
			}
			a["selected_options"] = opts
		default:
			if ok {
				a["value"] = val
			} else {
				a["value"] = nil
			}
		}
		state[in.BlockID] = map[string]any{in.ActionID: a}
	}
	return s.push("interactive", map[string]any{
		"type": "view_submission", "team": map[string]any{"id": TeamID}, "api_app_id": AppID, "token": "verif",
		"user":       map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": TeamID},
		"trigger_id": "sub." + v.ID,
		"view": map[string]any{"id": v.ID, "team_id": TeamID, "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.Metadata,
			"state": map[string]any{"values": state}, "hash": "h", "app_id": AppID, "bot_id": BotID},
	})
}

// push queues an envelope for the connection and returns its id.
func (s *Server) push(kind string, payload any) string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.nextEnv++
	id := fmt.Sprintf("env-%d", s.nextEnv)
	raw, err := json.Marshal(map[string]any{"envelope_id": id, "type": kind, "payload": payload, "accepts_response_payload": kind == "interactive", "retry_attempt": 0})
	if err != nil {
		panic(err)
	}
	s.queue = append(s.queue, envelope{id, raw})
	s.flushLocked()
	return id
}

// flushLocked sends queued envelopes on the current connection.
func (s *Server) flushLocked() {
	c := s.current
	if c == nil || s.Down || s.Revoked {
		return
	}
	for len(s.queue) > 0 {
		e := s.queue[0]
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, e.Raw); err != nil {
			return // stays queued for the next connection
		}
		s.queue = s.queue[1:]
	}
}

// Ack returns the acknowledgement of envelope id: its payload ("null"
// when empty) and whether it came.
func (s *Server) Ack(id string) (json.RawMessage, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.acks[id]
	return p, ok
}

// WaitAck waits for envelope id's acknowledgement.
func (s *Server) WaitAck(id string, d time.Duration) json.RawMessage {
	s.T.Helper()
	var p json.RawMessage
	s.Wait("ack of "+id, d, func(s *Server) bool {
		var ok bool
		p, ok = s.Ack(id)
		return ok
	})
	return p
}

// Messages returns copies of channel's messages (ephemerals included),
// oldest first; "" for every channel.
func (s *Server) Messages(channel string) []Message {
	return chattest.Copies(&s.Mu, &s.messages, func(m *Message) bool { return channel == "" || m.Channel == channel })
}

// Views returns the modals opened so far.
func (s *Server) Views() []View { return chattest.Copies(&s.Mu, &s.views, nil) }

// Wait waits until cond holds (checked on every change), failing the
// test after d.
func (s *Server) Wait(what string, d time.Duration, cond func(s *Server) bool) {
	s.T.Helper()
	s.Fake.Wait(what, d, func() bool { return cond(s) })
}

// WaitMessage waits for a bot message (not ephemeral) in channel whose
// text contains sub.
func (s *Server) WaitMessage(channel, sub string, d time.Duration) Message {
	s.T.Helper()
	return chattest.WaitFor(&s.Fake, "a message with "+strconv.Quote(sub), d,
		func() []Message { return s.Messages(channel) },
		func(m Message) bool { return m.User == "" && m.Ephemeral == "" && strings.Contains(m.Text, sub) })
}

// WaitEphemeral waits for an ephemeral message to user containing sub.
func (s *Server) WaitEphemeral(user, sub string, d time.Duration) Message {
	s.T.Helper()
	return chattest.WaitFor(&s.Fake, "an ephemeral message with "+strconv.Quote(sub), d,
		func() []Message { return s.Messages("") },
		func(m Message) bool { return m.Ephemeral == user && strings.Contains(m.Text, sub) })
}

// Get returns message ts of channel.
func (s *Server) Get(channel, ts string) (Message, bool) {
	return chattest.Find(&s.Mu, &s.messages, func(m *Message) bool { return m.Channel == channel && m.TS == ts })
}

func (s *Server) dump() string {
	var b strings.Builder
	for _, m := range s.Messages("") {
		fmt.Fprintf(&b, "  %s %s thread %s user %q eph %q edits %d: %q %v\n", m.Channel, m.TS, m.Thread, m.User, m.Ephemeral, m.Edits, m.Text, m.Actions)
	}
	return b.String()
}

// pinger pings every connection as Slack does; the client reconnects
// when pings stop.
func (s *Server) pinger() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.pingStop:
			return
		case <-t.C:
		}
		s.Mu.Lock()
		for c := range s.conns {
			_ = c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
		}
		s.Mu.Unlock()
	}
}

func reply(w http.ResponseWriter, v map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	v["ok"] = true
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string, details ...string) {
	w.Header().Set("Content-Type", "application/json")
	out := map[string]any{"ok": false, "error": code}
	if len(details) > 0 {
		out["response_metadata"] = map[string]any{"messages": details}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// token returns the request's token: the Authorization bearer or the
// form's token.
func token(r *http.Request) string {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return t
	}
	return r.PostForm.Get("token")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/link" {
		s.socket(w, r)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body map[string]json.RawMessage
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if r.ContentLength != 0 {
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				fail(w, "invalid_json")
				return
			}
		}
	} else if err := r.ParseForm(); err != nil {
		fail(w, "invalid_form_data")
		return
	}
	down, revoked := s.Call(method)
	if down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	tok := token(r)
	want := s.botToken
	if method == "apps.connections.open" {
		want = s.appToken
	}
	if tok == "" {
		fail(w, "not_authed")
		return
	}
	if revoked || tok != want {
		fail(w, "invalid_auth")
		return
	}
	switch method {
	case "auth.test":
		reply(w, map[string]any{"url": "https://warden-test.slack.com/", "team": "warden-test", "user": "warden", "team_id": TeamID, "user_id": BotUID, "bot_id": BotID})
	case "apps.connections.open":
		s.Mu.Lock()
		s.opens++
		n := s.opens
		s.Mu.Unlock()
		reply(w, map[string]any{"url": s.WebSocketURL() + "/link?ticket=" + strconv.Itoa(n)})
	case "chat.postMessage":
		s.post(w, r.PostForm, "")
	case "chat.postEphemeral":
		s.post(w, r.PostForm, r.PostForm.Get("user"))
	case "chat.update":
		s.update(w, r.PostForm)
	case "views.open":
		s.openView(w, body)
	default:
		fail(w, "unknown_method")
	}
}

func (s *Server) post(w http.ResponseWriter, f map[string][]string, ephemeralFor string) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	channel := get("channel")
	if channel == "" || strings.HasPrefix(channel, "CGONE") {
		fail(w, "channel_not_found")
		return
	}
	if ephemeralFor != "" && strings.HasPrefix(channel, "D") {
		fail(w, "user_not_in_channel")
		return
	}
	text, actions, problems := checkBlocks(get("blocks"), false)
	if len(problems) > 0 {
		fail(w, "invalid_blocks", problems...)
		return
	}
	if text == "" {
		text = get("text")
	}
	if strings.TrimSpace(text) == "" {
		fail(w, "no_text")
		return
	}
	s.Mu.Lock()
	ts := s.tsLocked()
	s.messages = append(s.messages, &Message{Channel: channel, TS: ts, Thread: get("thread_ts"), Text: text, Actions: actions,
		Blocks: json.RawMessage(get("blocks")), Ephemeral: ephemeralFor, At: time.Now()})
	s.Notify()
	s.Mu.Unlock()
	if ephemeralFor != "" {
		reply(w, map[string]any{"message_ts": ts})
		return
	}
	reply(w, map[string]any{"channel": channel, "ts": ts, "message": map[string]any{"text": text, "ts": ts, "user": BotUID, "bot_id": BotID}})
}

func (s *Server) update(w http.ResponseWriter, f map[string][]string) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	text, actions, problems := checkBlocks(get("blocks"), false)
	if len(problems) > 0 {
		fail(w, "invalid_blocks", problems...)
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, m := range s.messages {
		if m.Channel != get("channel") || m.TS != get("ts") || m.Ephemeral != "" {
			continue
		}
		if m.User != "" {
			fail(w, "cant_update_message")
			return
		}
		m.Text, m.Actions, m.Blocks = text, actions, json.RawMessage(get("blocks"))
		m.Edits++
		s.Notify()
		reply(w, map[string]any{"channel": m.Channel, "ts": m.TS, "text": text})
		return
	}
	fail(w, "message_not_found")
}

func (s *Server) openView(w http.ResponseWriter, body map[string]json.RawMessage) {
	var trig string
	_ = json.Unmarshal(body["trigger_id"], &trig)
	s.Mu.Lock()
	used, known := s.triggers[trig]
	if !known || used {
		s.Mu.Unlock()
		fail(w, "invalid_trigger_id")
		return
	}
	s.triggers[trig] = true
	s.Mu.Unlock()
	var v struct {
		Type       string          `json:"type"`
		Title      textObj         `json:"title"`
		Submit     *textObj        `json:"submit"`
		Close      *textObj        `json:"close"`
		CallbackID string          `json:"callback_id"`
		Metadata   string          `json:"private_metadata"`
		Blocks     json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(body["view"], &v); err != nil {
		fail(w, "invalid_arguments")
		return
	}
	var problems []string
	if v.Type != "modal" {
		problems = append(problems, "view type must be modal")
	}
	for _, t := range []*textObj{&v.Title, v.Submit, v.Close} {
		if t != nil && (t.Type != "plain_text" || utf8.RuneCountInString(t.Text) > 24 || t.Text == "") {
			problems = append(problems, fmt.Sprintf("title/submit/close %q must be plain_text of 1-24 characters", t.Text))
		}
	}
	if len(v.CallbackID) > 255 || len(v.Metadata) > 3000 {
		problems = append(problems, "callback_id or private_metadata too long")
	}
	inputs, more := checkModal(v.Blocks)
	problems = append(problems, more...)
	if len(problems) > 0 {
		fail(w, "invalid_arguments", problems...)
		return
	}
	s.Mu.Lock()
	id := fmt.Sprintf("V%04d", len(s.views)+1)
	s.views = append(s.views, &View{ID: id, CallbackID: v.CallbackID, Metadata: v.Metadata, Title: v.Title.Text, Trigger: trig, Inputs: inputs, Raw: body["view"]})
	s.Notify()
	s.Mu.Unlock()
	reply(w, map[string]any{"view": map[string]any{"id": id, "type": "modal", "callback_id": v.CallbackID}})
}

// socket serves a Socket Mode connection.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	s.Mu.Lock()
	bad := s.Down || s.Revoked
	s.Mu.Unlock()
	if bad {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	// Slack's clients send Origin: https://api.slack.com.
	up := websocket.Upgrader{CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") == "https://api.slack.com" }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.Mu.Lock()
	s.conns[c] = true
	_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"hello","num_connections":1,"debug_info":{"host":"slacktest","approximate_connection_time":18060},"connection_info":{"app_id":"`+AppID+`"}}`))
	s.current = c
	s.flushLocked()
	s.Notify()
	s.Mu.Unlock()
	defer func() {
		s.Mu.Lock()
		delete(s.conns, c)
		if s.current == c {
			s.current = nil
		}
		s.Notify()
		s.Mu.Unlock()
		_ = c.Close()
	}()
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		if len(ack.Payload) == 0 {
			ack.Payload = json.RawMessage("null")
		}
		s.Mu.Lock()
		s.acks[ack.EnvelopeID] = ack.Payload
		s.Notify()
		s.Mu.Unlock()
	}
}

// Disconnect asks the client to reconnect, as Slack does now and then.
func (s *Server) Disconnect() {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.current != nil {
		_ = s.current.WriteMessage(websocket.TextMessage, []byte(`{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"slacktest"}}`))
	}
}
