// Package discordtest is a local fake of Discord for tests: the REST
// API under /api/v10 (gateway discovery, channel messages, interaction
// callbacks, follow-up webhooks, direct-message channels) over real
// HTTP, and the gateway websocket on a loopback port speaking the
// gateway protocol: HELLO, IDENTIFY (token and intents checked), READY,
// heartbeats and their acks, and MESSAGE_CREATE and INTERACTION_CREATE
// dispatches with sequence numbers. Test controls play users (messages,
// button presses, modal submissions) and outages.
//
// It checks what Discord checks and a careless adapter would get wrong:
// the "Bot" token on every call, 2000 characters of content, five
// buttons to a row and five rows, custom ids of at most 100 characters
// unique in a message, one response per interaction within three
// seconds, modals of at most five text inputs with labels of at most 45
// characters, and messages edited only by their author. It records each
// message's allowed mentions so tests can check nothing can ping.
package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
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

// Identity of the fake application.
const (
	BotID   = "900000000000000001"
	AppID   = "900000000000000002"
	GuildID = "900000000000000003"
)

// User is a Discord user, with roles in the guild.
type User struct {
	ID    string
	Name  string
	Bot   bool
	Roles []string
}

// Button is a message button.
type Button struct{ CustomID, Label string }

// Message is a message in a fake channel.
type Message struct {
	ID, Channel string
	Author      string
	Content     string
	Buttons     []Button
	Ephemeral   bool
	// For is the user an ephemeral reply was shown to.
	For   string
	Edits int
	// Mentions is the message's allowed_mentions as sent.
	Mentions json.RawMessage
	// At is when the message reached the server.
	At time.Time
}

// Modal is an opened modal.
type Modal struct {
	CustomID, Title string
	Inputs          []Input
	Channel         string
	User            string
	// Message is the message whose button opened it.
	Message string
}

// Input is one text input of a modal.
type Input struct {
	CustomID, Label, Value, Placeholder string
	Required                            bool
}

// Response is an interaction's response.
type Response struct {
	Type int
	Data json.RawMessage
	At   time.Time
}

type interaction struct {
	id, token, channel, user, message string
	created                           time.Time
	responded                         bool
}

// Server is the fake.
type Server struct {
	chattest.Fake
	token string

	nextID       int64
	seq          int
	messages     []*Message
	modals       []*Modal
	interactions map[string]*interaction
	responses    map[string][]Response
	conns        map[*websocket.Conn]bool
	ready        *websocket.Conn
	identified   int
	intents      int
	wmu          sync.Mutex // serialises gateway writes
}

// New starts a fake for token; it stops when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, nextID: 1000, interactions: map[string]*interaction{}, responses: map[string][]Response{},
		conns: map[*websocket.Conn]bool{}}
	s.Start(t, "discordtest", s.serve, s.Close, s.dump)
	return s
}

// URL is the base for the adapter's APIBase option.
func (s *Server) URL() string { return s.Base() + "/" }

// Close stops the server.
func (s *Server) Close() {
	s.Mu.Lock()
	s.Down = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.Mu.Unlock()
	s.Stop()
}

// SetDown makes every call and connection fail while down.
func (s *Server) SetDown(down bool) { s.outage(&s.Down, down, nil) }

// Revoke makes the token invalid: REST answers 401 and the gateway
// closes with 4004 Authentication failed.
func (s *Server) Revoke(revoked bool) {
	s.outage(&s.Revoked, revoked, func(c *websocket.Conn) {
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
	})
}

// outage sets an outage switch (down, revoked); turning one on ends
// every gateway connection, after bye (if not nil) on each.
func (s *Server) outage(sw *bool, on bool, bye func(*websocket.Conn)) {
	s.Switch(sw, on, func() {
		for c := range s.conns {
			if bye != nil {
				bye(c)
			}
			_ = c.Close()
		}
		s.ready = nil
	})
}

func (s *Server) idLocked() string {
	s.nextID++
	return strconv.FormatInt(910000000000000000+s.nextID, 10)
}

// Ready reports whether a gateway session is identified and live.
func (s *Server) Ready() bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.ready != nil
}

// Identified returns how many IDENTIFYs were accepted, and the last
// one's intents.
func (s *Server) Identified() (int, int) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.identified, s.intents
}

// dispatch sends an event on the live gateway session.
func (s *Server) dispatch(event string, d any) {
	s.Mu.Lock()
	c := s.ready
	s.seq++
	seq := s.seq
	s.Mu.Unlock()
	if c == nil {
		s.T.Fatalf("discordtest: %s with no gateway session", event)
		return
	}
	s.write(c, map[string]any{"op": 0, "t": event, "s": seq, "d": d})
}

func (s *Server) write(c *websocket.Conn, v any) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.WriteJSON(v)
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": u.Bot, "discriminator": "0"}
}

// Say delivers a message from u in channel of the guild (dm: a direct
// message); mention mentions the bot.
func (s *Server) Say(channel string, dm bool, u User, content string, mention bool) string {
	s.Mu.Lock()
	id := s.idLocked()
	s.messages = append(s.messages, &Message{ID: id, Channel: channel, Author: u.ID, Content: content})
	s.Notify()
	s.Mu.Unlock()
	m := map[string]any{"id": id, "channel_id": channel, "author": userJSON(u), "content": content, "timestamp": time.Now().Format(time.RFC3339),
		"type": 0, "mentions": []any{}}
	if mention {
		m["content"] = "<@" + BotID + "> " + content
		m["mentions"] = []any{map[string]any{"id": BotID, "username": "warden", "bot": true}}
	}
	if !dm {
		m["guild_id"] = GuildID
		m["member"] = map[string]any{"roles": orEmpty(u.Roles)}
	}
	s.dispatch("MESSAGE_CREATE", m)
	return id
}

// SayWebhook delivers a message posted by a webhook (it may carry any
// name and id).
func (s *Server) SayWebhook(channel string, as User, content string) {
	s.Mu.Lock()
	id := s.idLocked()
	s.Mu.Unlock()
	u := userJSON(as)
	u["bot"] = true
	s.dispatch("MESSAGE_CREATE", map[string]any{"id": id, "channel_id": channel, "guild_id": GuildID, "webhook_id": "950000000000000001",
		"author": u, "content": content, "timestamp": time.Now().Format(time.RFC3339), "type": 0, "mentions": []any{}})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) newInteraction(channel string, u User, message string) (string, string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	id := s.idLocked()
	token := "itok-" + id
	s.interactions[id] = &interaction{id: id, token: token, channel: channel, user: u.ID, message: message, created: time.Now()}
	return id, token
}

func (s *Server) messageJSON(m *Message) map[string]any {
	rows := []any{}
	var row []any
	for i, b := range m.Buttons {
		row = append(row, map[string]any{"type": 2, "custom_id": b.CustomID, "label": b.Label, "style": 1})
		if len(row) == 5 || i == len(m.Buttons)-1 {
			rows = append(rows, map[string]any{"type": 1, "components": row})
			row = nil
		}
	}
	flags := 0
	if m.Ephemeral {
		flags = 64
	}
	return map[string]any{"id": m.ID, "channel_id": m.Channel, "content": m.Content, "components": rows, "flags": flags,
		"author": map[string]any{"id": BotID, "username": "warden", "bot": true}, "timestamp": time.Now().Format(time.RFC3339), "type": 0}
}

// Click presses the button customID on message id as u, in the guild,
// and returns the interaction's id.
func (s *Server) Click(u User, id, customID string) string {
	m := chattest.Pressed(&s.Fake, &s.messages, func(x *Message) bool { return x.ID == id }, id)
	msg := s.messageJSON(m)
	channel := m.Channel
	s.Mu.Unlock()
	iid, tok := s.newInteraction(channel, u, id)
	s.dispatch("INTERACTION_CREATE", map[string]any{"id": iid, "application_id": AppID, "type": 3, "token": tok, "version": 1,
		"guild_id": GuildID, "channel_id": channel, "member": map[string]any{"user": userJSON(u), "roles": orEmpty(u.Roles)},
		"message": msg, "data": map[string]any{"custom_id": customID, "component_type": 2}})
	return iid
}

// Submit submits modal md as u with values by input custom id and
// returns the interaction's id.
func (s *Server) Submit(u User, md Modal, values map[string]string) string {
	iid, tok := s.newInteraction(md.Channel, u, md.Message)
	var rows []any
	for _, in := range md.Inputs {
		rows = append(rows, map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": in.CustomID, "value": values[in.CustomID]}}})
	}
	ev := map[string]any{"id": iid, "application_id": AppID, "type": 5, "token": tok, "version": 1,
		"guild_id": GuildID, "channel_id": md.Channel, "member": map[string]any{"user": userJSON(u), "roles": orEmpty(u.Roles)},
		"data": map[string]any{"custom_id": md.CustomID, "components": rows}}
	s.Mu.Lock()
	for _, m := range s.messages {
		if m.ID == md.Message {
			ev["message"] = s.messageJSON(m)
		}
	}
	s.Mu.Unlock()
	s.dispatch("INTERACTION_CREATE", ev)
	return iid
}

// Responses returns interaction id's response and follow-ups.
func (s *Server) Responses(id string) []Response {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]Response(nil), s.responses[id]...)
}

// WaitResponse waits for interaction id's first response.
func (s *Server) WaitResponse(id string, d time.Duration) Response {
	s.T.Helper()
	var got Response
	s.Wait("a response to interaction "+id, d, func(s *Server) bool {
		rs := s.Responses(id)
		if len(rs) > 0 {
			got = rs[0]
			return true
		}
		return false
	})
	return got
}

// Messages returns copies of channel's messages ("" for all).
func (s *Server) Messages(channel string) []Message {
	return chattest.Copies(&s.Mu, &s.messages, func(m *Message) bool { return channel == "" || m.Channel == channel })
}

// Get returns message id.
func (s *Server) Get(id string) (Message, bool) {
	return chattest.Find(&s.Mu, &s.messages, func(m *Message) bool { return m.ID == id })
}

// Modals returns the modals opened so far.
func (s *Server) Modals() []Modal { return chattest.Copies(&s.Mu, &s.modals, nil) }

// Wait waits until cond holds (checked on every change), failing the
// test after d.
func (s *Server) Wait(what string, d time.Duration, cond func(s *Server) bool) {
	s.T.Helper()
	s.Fake.Wait(what, d, func() bool { return cond(s) })
}

// WaitMessage waits for a bot message (not ephemeral) in channel
// containing sub.
func (s *Server) WaitMessage(channel, sub string, d time.Duration) Message {
	s.T.Helper()
	return chattest.WaitFor(&s.Fake, "a message with "+strconv.Quote(sub), d,
		func() []Message { return s.Messages(channel) },
		func(m Message) bool { return m.Author == BotID && !m.Ephemeral && strings.Contains(m.Content, sub) })
}

func (s *Server) dump() string {
	var b strings.Builder
	for _, m := range s.Messages("") {
		fmt.Fprintf(&b, "  %s #%s by %s eph %v for %q edits %d: %q %v\n", m.Channel, m.ID, m.Author, m.Ephemeral, m.For, m.Edits, m.Content, m.Buttons)
	}
	return b.String()
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	reply(w, status, map[string]any{"message": msg, "code": code})
}

// payload is a message (or interaction response) body.
type payload struct {
	Content         string            `json:"content"`
	Components      []json.RawMessage `json:"components"`
	AllowedMentions json.RawMessage   `json:"allowed_mentions"`
	Flags           int               `json:"flags"`
	CustomID        string            `json:"custom_id"`
	Title           string            `json:"title"`
}

type component struct {
	Type        int               `json:"type"`
	CustomID    string            `json:"custom_id"`
	Label       string            `json:"label"`
	Style       int               `json:"style"`
	Value       string            `json:"value"`
	Placeholder string            `json:"placeholder"`
	Required    *bool             `json:"required"`
	MaxLength   int               `json:"max_length"`
	Components  []json.RawMessage `json:"components"`
}

// buttons validates a message's components: action rows of buttons.
func buttons(rows []json.RawMessage) ([]Button, string) {
	if len(rows) > 5 {
		return nil, "more than 5 action rows"
	}
	var out []Button
	seen := map[string]bool{}
	for _, r := range rows {
		var row component
		if err := json.Unmarshal(r, &row); err != nil || row.Type != 1 {
			return nil, "a top-level component is not an action row"
		}
		if len(row.Components) == 0 || len(row.Components) > 5 {
			return nil, "an action row needs 1-5 components"
		}
		for _, c := range row.Components {
			var b component
			if err := json.Unmarshal(c, &b); err != nil || b.Type != 2 {
				return nil, "only buttons are expected in rows"
			}
			switch {
			case b.CustomID == "" || len(b.CustomID) > 100 || seen[b.CustomID]:
				return nil, "custom_id empty, longer than 100 or repeated: " + b.CustomID
			case utf8.RuneCountInString(b.Label) > 80 || b.Label == "":
				return nil, "button label must be 1-80 characters"
			case b.Style < 1 || b.Style > 4:
				return nil, "button style must be 1-4 with a custom_id"
			}
			seen[b.CustomID] = true
			out = append(out, Button{CustomID: b.CustomID, Label: b.Label})
		}
	}
	return out, ""
}

func checkContent(p payload) string {
	if utf8.RuneCountInString(p.Content) > 2000 {
		return "content longer than 2000 characters"
	}
	if strings.TrimSpace(p.Content) == "" && len(p.Components) == 0 {
		return "Cannot send an empty message"
	}
	return ""
}

// newMessage validates a new message's content and components and
// returns its buttons.
func newMessage(p payload) ([]Button, string) {
	if e := checkContent(p); e != "" {
		return nil, e
	}
	return buttons(p.Components)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// The gateway is at the root of its host, as wss://gateway.discord.gg
	// is: clients add "/?v=…&encoding=json".
	if r.URL.Path == "/" {
		s.gateway(w, r)
		return
	}
	// Discord serves API versions 9 and 10 (discordgo v0.29 speaks 9).
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v10/")
	if !ok {
		path, ok = strings.CutPrefix(r.URL.Path, "/api/v9/")
	}
	if !ok {
		apiError(w, http.StatusNotFound, 0, "404: Not Found")
		return
	}
	s.Mu.Lock()
	down, revoked := s.Down, s.Revoked
	s.Mu.Unlock()
	if down {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	// Interaction callbacks and webhooks authenticate by their token;
	// everything else by the bot token.
	byToken := strings.HasPrefix(path, "interactions/") || strings.HasPrefix(path, "webhooks/")
	if !byToken && (revoked || r.Header.Get("Authorization") != "Bot "+s.token) {
		apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	var raw []byte
	if r.Method != http.MethodGet {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || (len(b) > 0 && !json.Valid(b)) {
			apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
			return
		}
		raw = b
	}
	var p payload
	_ = json.Unmarshal(raw, &p)
	parts := strings.Split(path, "/")
	switch {
	case r.Method == http.MethodGet && (path == "gateway" || path == "gateway/bot"):
		reply(w, 200, map[string]any{"url": s.WebSocketURL(), "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		s.createMessage(w, parts[1], p, "", false)
	case r.Method == http.MethodPatch && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		s.editMessage(w, parts[1], parts[3], p)
	case r.Method == http.MethodPost && path == "users/@me/channels":
		var body struct {
			Recipient string `json:"recipient_id"`
		}
		if json.Unmarshal(raw, &body) != nil || body.Recipient == "" {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: recipient_id")
			return
		}
		reply(w, 200, map[string]any{"id": "DM" + body.Recipient, "type": 1})
	case r.Method == http.MethodPost && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		s.callback(w, parts[1], parts[2], raw)
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "webhooks":
		s.followup(w, parts[1], parts[2], p)
	default:
		apiError(w, http.StatusNotFound, 0, "404: Not Found "+r.Method+" "+path)
	}
}

func (s *Server) createMessage(w http.ResponseWriter, channel string, p payload, forUser string, ephemeral bool) {
	if strings.HasPrefix(channel, "GONE") {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	bs, e := newMessage(p)
	if e != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+e)
		return
	}
	s.Mu.Lock()
	m := &Message{ID: s.idLocked(), Channel: channel, Author: BotID, Content: p.Content, Buttons: bs, Ephemeral: ephemeral, For: forUser, Mentions: p.AllowedMentions, At: time.Now()}
	s.messages = append(s.messages, m)
	s.Notify()
	out := s.messageJSON(m)
	s.Mu.Unlock()
	reply(w, 200, out)
}

func (s *Server) editMessage(w http.ResponseWriter, channel, id string, p payload) {
	if utf8.RuneCountInString(p.Content) > 2000 {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: content longer than 2000 characters")
		return
	}
	bs, e := buttons(p.Components)
	if e != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+e)
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, m := range s.messages {
		if m.ID != id || m.Channel != channel || m.Ephemeral {
			continue
		}
		if m.Author != BotID {
			apiError(w, http.StatusForbidden, 50005, "Cannot edit a message authored by another user")
			return
		}
		m.Content, m.Buttons, m.Mentions = p.Content, bs, p.AllowedMentions
		m.Edits++
		s.Notify()
		reply(w, 200, s.messageJSON(m))
		return
	}
	apiError(w, http.StatusNotFound, 10008, "Unknown Message")
}

// callback is an interaction's response: once, within three seconds.
func (s *Server) callback(w http.ResponseWriter, id, token string, raw []byte) {
	var body struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &body) != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	var p payload
	_ = json.Unmarshal(body.Data, &p)
	s.Mu.Lock()
	in, ok := s.interactions[id]
	switch {
	case !ok || in.token != token || time.Since(in.created) > 3*time.Second:
		s.Mu.Unlock()
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	case in.responded:
		s.Mu.Unlock()
		apiError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	}
	s.Mu.Unlock()
	switch body.Type {
	case 4:
		bs, e := newMessage(p)
		if e != "" {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+e)
			return
		}
		s.Mu.Lock()
		m := &Message{ID: s.idLocked(), Channel: in.channel, Author: BotID, Content: p.Content, Buttons: bs, Ephemeral: p.Flags&64 != 0, For: in.user, Mentions: p.AllowedMentions}
		s.messages = append(s.messages, m)
		s.Mu.Unlock()
	case 5, 6:
	case 7:
		bs, e := buttons(p.Components)
		if e != "" || utf8.RuneCountInString(p.Content) > 2000 {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+e)
			return
		}
		s.Mu.Lock()
		found := false
		for _, m := range s.messages {
			if m.ID == in.message {
				m.Content, m.Buttons, m.Mentions = p.Content, bs, p.AllowedMentions
				m.Edits++
				found = true
			}
		}
		s.Mu.Unlock()
		if !found {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: UPDATE_MESSAGE without a message")
			return
		}
	case 9:
		md, e := modal(p)
		if e != "" {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+e)
			return
		}
		md.Channel, md.User, md.Message = in.channel, in.user, in.message
		s.Mu.Lock()
		s.modals = append(s.modals, &md)
		s.Mu.Unlock()
	default:
		apiError(w, http.StatusBadRequest, 50035, fmt.Sprintf("Invalid Form Body: interaction response type %d", body.Type))
		return
	}
	s.Mu.Lock()
	in.responded = true
	s.responses[id] = append(s.responses[id], Response{Type: body.Type, Data: body.Data, At: time.Now()})
	s.Notify()
	s.Mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// modal validates a modal response: one to five rows of one text input.
func modal(p payload) (Modal, string) {
	md := Modal{CustomID: p.CustomID, Title: p.Title}
	switch {
	case p.CustomID == "" || len(p.CustomID) > 100:
		return md, "modal custom_id must be 1-100 characters"
	case p.Title == "" || utf8.RuneCountInString(p.Title) > 45:
		return md, "modal title must be 1-45 characters"
	case len(p.Components) == 0 || len(p.Components) > 5:
		return md, "a modal holds 1-5 action rows"
	}
	seen := map[string]bool{}
	for _, r := range p.Components {
		var row component
		if json.Unmarshal(r, &row) != nil || row.Type != 1 || len(row.Components) != 1 {
			return md, "each modal row must hold one component"
		}
		var ti component
		if json.Unmarshal(row.Components[0], &ti) != nil || ti.Type != 4 {
			return md, "modal components must be text inputs"
		}
		switch {
		case ti.CustomID == "" || len(ti.CustomID) > 100 || seen[ti.CustomID]:
			return md, "text input custom_id empty, too long or repeated"
		case ti.Label == "" || utf8.RuneCountInString(ti.Label) > 45:
			return md, "text input label must be 1-45 characters: " + ti.Label
		case ti.Style != 1 && ti.Style != 2:
			return md, "text input style must be 1 or 2"
		case utf8.RuneCountInString(ti.Value) > 4000 || utf8.RuneCountInString(ti.Placeholder) > 100:
			return md, "text input value or placeholder too long"
		case ti.MaxLength > 4000:
			return md, "text input max_length above 4000"
		}
		seen[ti.CustomID] = true
		md.Inputs = append(md.Inputs, Input{CustomID: ti.CustomID, Label: ti.Label, Value: ti.Value, Placeholder: ti.Placeholder, Required: ti.Required == nil || *ti.Required})
	}
	return md, ""
}

func (s *Server) followup(w http.ResponseWriter, app, token string, p payload) {
	if app != AppID {
		apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	s.Mu.Lock()
	var in *interaction
	for _, x := range s.interactions {
		if x.token == token {
			in = x
		}
	}
	s.Mu.Unlock()
	if in == nil || !in.responded {
		apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	s.Mu.Lock()
	raw, _ := json.Marshal(p)
	s.responses[in.id] = append(s.responses[in.id], Response{Type: -1, Data: raw, At: time.Now()})
	s.Mu.Unlock()
	s.createMessage(w, in.channel, p, in.user, p.Flags&64 != 0)
}

// gateway serves one gateway session.
func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	s.Mu.Lock()
	bad := s.Down
	s.Mu.Unlock()
	if bad {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	if v := r.URL.Query().Get("v"); (v != "9" && v != "10") || r.URL.Query().Get("encoding") != "json" {
		http.Error(w, "want v=9 or 10 and encoding=json", http.StatusBadRequest)
		return
	}
	c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.Mu.Lock()
	s.conns[c] = true
	s.Mu.Unlock()
	defer func() {
		s.Mu.Lock()
		delete(s.conns, c)
		if s.ready == c {
			s.ready = nil
		}
		s.Notify()
		s.Mu.Unlock()
		_ = c.Close()
	}()
	s.write(c, map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 41250}})
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var op struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &op) != nil {
			s.close(c, 4002, "Error while decoding payload.")
			return
		}
		switch op.Op {
		case 1: // heartbeat
			s.write(c, map[string]any{"op": 11})
		case 2: // identify
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			_ = json.Unmarshal(op.D, &id)
			s.Mu.Lock()
			revoked := s.Revoked
			s.Mu.Unlock()
			if revoked || id.Token != "Bot "+s.token {
				s.close(c, 4004, "Authentication failed.")
				return
			}
			s.Mu.Lock()
			s.identified++
			s.intents = id.Intents
			s.seq++
			seq := s.seq
			s.ready = c
			s.Notify()
			s.Mu.Unlock()
			s.write(c, map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{
				"v": 9, "user": map[string]any{"id": BotID, "username": "warden", "bot": true, "discriminator": "0"},
				"session_id": "sess-" + strconv.Itoa(seq), "resume_gateway_url": s.WebSocketURL(),
				"guilds": []any{}, "application": map[string]any{"id": AppID, "flags": 0}}})
		case 6: // resume: this fake keeps no sessions
			s.write(c, map[string]any{"op": 9, "d": false})
		}
	}
}

func (s *Server) close(c *websocket.Conn, code int, text string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
}
