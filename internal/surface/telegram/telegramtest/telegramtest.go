// Package telegramtest is a local fake of the Telegram Bot API for
// tests: a real HTTP server on a loopback port speaking the methods
// warden's adapter uses — getMe, getUpdates (long polling with offsets),
// sendMessage, editMessageText, answerCallbackQuery — with Telegram's
// response envelope and errors, and test controls to play users (send
// messages, press buttons) and outages (down, revoked token).
//
// It checks what the real API checks and a careless adapter would get
// wrong: the token in the path, HTML that parses with only Telegram's
// tags, callback data of at most 64 bytes, text of at most 4096
// characters, one answer per callback query, "message is not modified".
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/surface/chattest"
)

// BotID and BotName are the fake bot's identity.
const (
	BotID   = 900001
	BotName = "warden_test_bot"
)

// User is a fake Telegram user.
type User struct {
	ID       int64  `json:"id"`
	IsBot    bool   `json:"is_bot"`
	First    string `json:"first_name"`
	UserName string `json:"username,omitempty"`
}

// Button is one inline keyboard button.
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Message is a message in a fake chat.
type Message struct {
	ID       int
	Chat     int64
	Thread   int
	From     User
	Text     string // as sent (HTML for the bot's messages)
	Keyboard [][]Button
	Edits    int
	Sent     time.Time
}

// Buttons returns the message's buttons in order.
func (m Message) Buttons() []Button {
	var out []Button
	for _, r := range m.Keyboard {
		out = append(out, r...)
	}
	return out
}

// CallbackAnswer is an answerCallbackQuery call.
type CallbackAnswer struct {
	Query string
	Text  string
	Alert bool
}

// Server is the fake.
type Server struct {
	chattest.Fake
	token string

	updates  []json.RawMessage // queued, by update id
	firstID  int               // update id of updates[0]
	nextID   int
	messages []*Message
	nextMsg  int
	queries  map[string]bool // callback query id → answered
	answers  []CallbackAnswer
	nextQ    int
}

// New starts a fake for token; it stops when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, firstID: 1, nextID: 1, nextMsg: 1, queries: map[string]bool{}}
	s.Start(t, "telegramtest", s.serve, s.Close, s.dump)
	return s
}

// Endpoint is the method URL pattern for the adapter's Endpoint option.
func (s *Server) Endpoint() string { return s.Base() + "/bot%s/%s" }

// Close stops the server.
func (s *Server) Close() {
	s.Switch(&s.Down, true, nil)
	s.Stop()
}

// SetDown makes every call fail (502) while down, as in an outage.
func (s *Server) SetDown(down bool) {
	s.Switch(&s.Down, down, nil)
	if down {
		s.Hangup()
	}
}

// Revoke makes the token invalid (401 Unauthorized), as when it is
// revoked at @BotFather.
func (s *Server) Revoke(revoked bool) { s.Switch(&s.Revoked, revoked, nil) }

func (s *Server) push(u map[string]any) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	u["update_id"] = s.nextID
	s.nextID++
	b, err := json.Marshal(u)
	if err != nil {
		panic(err)
	}
	s.updates = append(s.updates, b)
	s.Notify()
}

func chatOf(chat int64) map[string]any {
	if chat > 0 {
		return map[string]any{"id": chat, "type": "private"}
	}
	return map[string]any{"id": chat, "type": "supergroup", "title": "group", "is_forum": true}
}

// Say delivers a text message from u in chat (thread 0: none).
func (s *Server) Say(chat int64, thread int, u User, text string) {
	s.SayAt(chat, thread, u, text, time.Now())
}

// SayAt is Say with the message's date.
func (s *Server) SayAt(chat int64, thread int, u User, text string, at time.Time) {
	s.Mu.Lock()
	id := s.nextMsg
	s.nextMsg++
	s.messages = append(s.messages, &Message{ID: id, Chat: chat, Thread: thread, From: u, Text: text, Sent: at})
	s.Mu.Unlock()
	m := map[string]any{"message_id": id, "from": u, "chat": chatOf(chat), "date": at.Unix(), "text": text}
	if thread != 0 {
		m["message_thread_id"], m["is_topic_message"] = thread, true
	}
	if strings.HasPrefix(text, "/") {
		word, _, _ := strings.Cut(text, " ")
		m["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": utf16Len(word)}}
	}
	s.push(map[string]any{"message": m})
}

// Click presses the button with data on message id, as u, and returns
// the callback query's id.
func (s *Server) Click(u User, msg int, data string) string {
	m := chattest.Pressed(&s.Fake, &s.messages, func(x *Message) bool { return x.ID == msg }, strconv.Itoa(msg))
	s.nextQ++
	qid := fmt.Sprintf("q%d", s.nextQ)
	s.queries[qid] = false
	mm := map[string]any{"message_id": m.ID, "from": User{ID: BotID, IsBot: true, First: "warden", UserName: BotName},
		"chat": chatOf(m.Chat), "date": m.Sent.Unix(), "text": m.Text}
	if m.Thread != 0 {
		mm["message_thread_id"], mm["is_topic_message"] = m.Thread, true
	}
	s.Mu.Unlock()
	s.push(map[string]any{"callback_query": map[string]any{"id": qid, "from": u, "message": mm, "chat_instance": "ci", "data": data}})
	return qid
}

// Duplicate copies the bot's message id as a new message, buttons
// included, and returns the copy's id: what a chat shows when a post
// reached the platform but its answer was lost and the bot posted again.
func (s *Server) Duplicate(id int) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, m := range s.messages {
		if m.ID == id {
			c := *m
			c.ID, c.Edits = s.nextMsg, 0
			s.nextMsg++
			s.messages = append(s.messages, &c)
			s.Notify()
			return c.ID
		}
	}
	s.T.Fatalf("telegramtest: duplicate of unknown message %d", id)
	return 0
}

// Messages returns a copy of the messages of chat, oldest first (chat 0:
// all).
func (s *Server) Messages(chat int64) []Message {
	return chattest.Copies(&s.Mu, &s.messages, func(m *Message) bool { return chat == 0 || m.Chat == chat })
}

// Answers returns the callback queries' answers so far.
func (s *Server) Answers() []CallbackAnswer {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]CallbackAnswer(nil), s.answers...)
}

// Wait waits until cond holds (checked on every change), failing the
// test after d.
func (s *Server) Wait(what string, d time.Duration, cond func(s *Server) bool) {
	s.T.Helper()
	s.Fake.Wait(what, d, func() bool { return cond(s) })
}

// WaitMessage waits for a bot message in chat whose text contains sub
// and returns it.
func (s *Server) WaitMessage(chat int64, sub string, d time.Duration) Message {
	s.T.Helper()
	return chattest.WaitFor(&s.Fake, "a message with "+strconv.Quote(sub), d,
		func() []Message { return s.Messages(chat) },
		func(m Message) bool { return m.From.ID == BotID && strings.Contains(m.Text, sub) })
}

// Message returns message id.
func (s *Server) Message(id int) (Message, bool) {
	return chattest.Find(&s.Mu, &s.messages, func(m *Message) bool { return m.ID == id })
}

func (s *Server) dump() string {
	var b strings.Builder
	for _, m := range s.Messages(0) {
		fmt.Fprintf(&b, "  #%d chat %d from %d (edits %d): %q %v\n", m.ID, m.Chat, m.From.ID, m.Edits, m.Text, m.Buttons())
	}
	return b.String()
}

// reply writes Telegram's envelope.
func reply(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, code int, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": code, "description": desc})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || r.Method != http.MethodPost {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	down, revoked := s.Call(method)
	switch {
	case down:
		fail(w, http.StatusBadGateway, "Bad Gateway")
		return
	case token != s.token || revoked:
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	f := r.PostForm
	switch method {
	case "getMe":
		reply(w, User{ID: BotID, IsBot: true, First: "warden", UserName: BotName})
	case "getUpdates":
		s.getUpdates(w, r, f.Get("offset"), f.Get("timeout"))
	case "sendMessage":
		s.sendMessage(w, f.Get("chat_id"), f.Get("message_thread_id"), f.Get("text"), f.Get("parse_mode"), f.Get("reply_markup"))
	case "editMessageText":
		s.editMessageText(w, f.Get("chat_id"), f.Get("message_id"), f.Get("text"), f.Get("parse_mode"), f.Get("reply_markup"))
	case "answerCallbackQuery":
		s.Mu.Lock()
		id := f.Get("callback_query_id")
		answered, known := s.queries[id]
		if !known || answered {
			s.Mu.Unlock()
			fail(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid")
			return
		}
		s.queries[id] = true
		s.answers = append(s.answers, CallbackAnswer{Query: id, Text: f.Get("text"), Alert: f.Get("show_alert") == "true"})
		s.Notify()
		s.Mu.Unlock()
		reply(w, true)
	default:
		fail(w, http.StatusNotFound, "Not Found: method not found")
	}
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, offset, timeout string) {
	off, _ := strconv.Atoi(offset)
	secs, _ := strconv.Atoi(timeout)
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(secs)*time.Second)
	defer cancel()
	for {
		s.Mu.Lock()
		// An offset confirms every earlier update: they are gone.
		for len(s.updates) > 0 && s.firstID < off {
			s.updates = s.updates[1:]
			s.firstID++
		}
		if s.Down || s.Revoked {
			s.Mu.Unlock()
			fail(w, http.StatusBadGateway, "Bad Gateway")
			return
		}
		if len(s.updates) > 0 {
			out := append([]json.RawMessage(nil), s.updates...)
			s.Mu.Unlock()
			reply(w, out)
			return
		}
		wake := s.Next()
		s.Mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			reply(w, []json.RawMessage{})
			return
		}
	}
}

func (s *Server) parseMarkup(markup string) ([][]Button, string) {
	if markup == "" {
		return nil, ""
	}
	var kb struct {
		Inline *[][]Button `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &kb); err != nil || kb.Inline == nil {
		return nil, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	for _, row := range *kb.Inline {
		for _, b := range row {
			if b.Text == "" {
				return nil, "Bad Request: text buttons are unallowed in the inline keyboard"
			}
			if len(b.Data) > 64 || (b.Data == "" && b.URL == "") {
				return nil, "Bad Request: BUTTON_DATA_INVALID"
			}
		}
	}
	return *kb.Inline, ""
}

// content checks a message's text and keyboard as Telegram parses them
// and returns the keyboard.
func (s *Server) content(text, mode, markup string) ([][]Button, string) {
	if e := checkText(text, mode); e != "" {
		return nil, e
	}
	return s.parseMarkup(markup)
}

// checkText checks a message text as Telegram parses it.
func checkText(text, mode string) string {
	if strings.TrimSpace(text) == "" {
		return "Bad Request: message text is empty"
	}
	visible := text
	if mode == "HTML" {
		v, err := parseHTML(text)
		if err != "" {
			return "Bad Request: can't parse entities: " + err
		}
		visible = v
	} else if mode != "" {
		return "Bad Request: unsupported parse_mode " + mode
	}
	if utf8.RuneCountInString(visible) > 4096 {
		return "Bad Request: message is too long"
	}
	return ""
}

func (s *Server) sendMessage(w http.ResponseWriter, chatID, thread, text, mode, markup string) {
	chat, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: chat not found")
		return
	}
	kb, e := s.content(text, mode, markup)
	if e != "" {
		fail(w, http.StatusBadRequest, e)
		return
	}
	th, _ := strconv.Atoi(thread)
	s.Mu.Lock()
	id := s.nextMsg
	s.nextMsg++
	m := &Message{ID: id, Chat: chat, Thread: th, From: User{ID: BotID, IsBot: true, First: "warden", UserName: BotName}, Text: text, Keyboard: kb, Sent: time.Now()}
	s.messages = append(s.messages, m)
	s.Notify()
	s.Mu.Unlock()
	out := map[string]any{"message_id": id, "from": m.From, "chat": chatOf(chat), "date": m.Sent.Unix(), "text": text}
	if th != 0 {
		out["message_thread_id"], out["is_topic_message"] = th, true
	}
	reply(w, out)
}

func (s *Server) editMessageText(w http.ResponseWriter, chatID, msgID, text, mode, markup string) {
	chat, _ := strconv.ParseInt(chatID, 10, 64)
	id, _ := strconv.Atoi(msgID)
	kb, e := s.content(text, mode, markup)
	if e != "" {
		fail(w, http.StatusBadRequest, e)
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, m := range s.messages {
		if m.ID != id || m.Chat != chat {
			continue
		}
		if m.From.ID != BotID {
			fail(w, http.StatusBadRequest, "Bad Request: message can't be edited")
			return
		}
		if m.Text == text && len(m.Buttons()) == countButtons(kb) {
			fail(w, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
			return
		}
		m.Text, m.Keyboard = text, kb
		m.Edits++
		s.Notify()
		reply(w, map[string]any{"message_id": id, "chat": chatOf(chat), "date": m.Sent.Unix(), "text": text})
		return
	}
	fail(w, http.StatusBadRequest, "Bad Request: message to edit not found")
}

func countButtons(kb [][]Button) int {
	n := 0
	for _, r := range kb {
		n += len(r)
	}
	return n
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// parseHTML checks Telegram's HTML subset (b, strong, i, em, u, ins, s,
// strike, del, code, pre, a href, tg-spoiler; entities &lt; &gt; &amp;
// &quot;) and returns the visible text.
func parseHTML(s string) (string, string) {
	allowed := map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true, "s": true, "strike": true,
		"del": true, "code": true, "pre": true, "a": true, "tg-spoiler": true}
	var (
		out   strings.Builder
		stack []string
	)
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return "", fmt.Sprintf("unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+j]
			i += j + 1
			if strings.HasPrefix(tag, "/") {
				name := tag[1:]
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", "unmatched end tag " + name
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name, attrs, _ := strings.Cut(tag, " ")
			if !allowed[name] {
				return "", "unsupported start tag \"" + name + "\""
			}
			if name == "a" && !strings.HasPrefix(attrs, `href="`) {
				return "", "a tag without href"
			}
			if name != "a" && attrs != "" {
				return "", "unexpected attributes in " + name
			}
			stack = append(stack, name)
		case '>':
			return "", "unexpected > at byte offset " + strconv.Itoa(i)
		case '&':
			j := strings.IndexByte(s[i:], ';')
			if j < 0 {
				return "", "unclosed entity"
			}
			ent := s[i : i+j+1]
			switch ent {
			case "&lt;":
				out.WriteByte('<')
			case "&gt;":
				out.WriteByte('>')
			case "&amp;":
				out.WriteByte('&')
			case "&quot;":
				out.WriteByte('"')
			case "&#39;":
				out.WriteByte('\'')
			default:
				n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ent, "&#"), ";"))
				if !strings.HasPrefix(ent, "&#") || err != nil || n <= 0 || n > 0x10ffff {
					return "", "unsupported entity " + ent
				}
				out.WriteRune(rune(n))
			}
			i += j + 1
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", "unclosed tag " + stack[len(stack)-1]
	}
	return out.String(), ""
}
