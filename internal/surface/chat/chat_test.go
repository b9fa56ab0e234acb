package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const req = "01J00000000000000000000000"

func TestParseID(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want parsed
		ok   bool
	}{
		{makeID(verbOnce, req), parsed{verb: verbOnce, request: req}, true},
		{makeID(verbFill, req, 3), parsed{verb: verbFill, request: req, arg: 3}, true},
		{makeID(verbValue, req, 256*2+1), parsed{verb: verbValue, request: req, arg: 513}, true},
		{"w1|once|" + req + "|1", parsed{}, false},              // once takes no argument
		{"w1|fill|" + req, parsed{}, false},                     // fill needs one
		{"w1|fill|" + req + "|01", parsed{}, false},             // not canonical
		{"w1|fill|" + req + "|-1", parsed{}, false},             // negative
		{"w1|nuke|" + req, parsed{}, false},                     // unknown verb
		{"w2|once|" + req, parsed{}, false},                     // other version
		{"w1|once|01j00000000000000000000000", parsed{}, false}, // not a ULID
		{"w1|once|" + req + "X", parsed{}, false},
		{"", parsed{}, false},
	} {
		got, ok := parseID(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseID(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if n := len(makeID(verbValue, req, 40*256+199)); n > 64 {
		t.Errorf("the longest id is %d bytes; Telegram allows 64", n)
	}
}

func TestSessionKeys(t *testing.T) {
	for _, c := range []Conv{{Chat: "C1"}, {Chat: "C1", Thread: "1700000000.000100"}, {Chat: "-1001234", Thread: "7"}} {
		k := SessionKey("slack", c)
		got, ok := ParseSessionKey("slack", k)
		if !ok || got != c {
			t.Errorf("round trip of %+v: %q -> %+v %v", c, k, got, ok)
		}
	}
	for _, k := range []string{"telegram:1", "slack:", "slack:C1:2:3", "slack:C1:", "slack::x", "web:slack:C1", "slackx:C1"} {
		if c, ok := ParseSessionKey("slack", k); ok {
			t.Errorf("ParseSessionKey(slack, %q) = %+v", k, c)
		}
	}
}

func TestVisible(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ls -la", "ls -la"},
		{"rm\u00a0-rf /", `rm\u00a0-rf /`},
		{"echo ok\rrm -rf ~", `echo ok\rrm -rf ~`},
		{"a\x1b[2Kb", `a\x1b[2Kb`},
		{"\u202eevil", `\u202eevil`},
		{`printf '\x41'`, `printf '\\x41'`},
		{"echo ```\n", "echo \\x60\\x60\\x60\n"},
		{"echo `date`", "echo `date`"},
		{"café", `caf\u00e9`},
		{"\xff", `\xff`},
		{"😀", `\U0001f600`},
	} {
		if got := visible(tt.in); got != tt.want {
			t.Errorf("visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScopes(t *testing.T) {
	plain := store.Request{ID: req, Action: action.NewShell("rm -rf x"), Classes: []string{"delete.recursive"},
		Analysis: json.RawMessage(`{"input":"rm -rf x","findings":[{"class":"delete.recursive"}]}`)}
	dynamic := plain
	dynamic.Analysis = json.RawMessage(`{"input":"$(curl x)","dynamic":true}`)
	opaqueFinding := plain
	opaqueFinding.Analysis = json.RawMessage(`{"findings":[{"class":"x","opaque":true}]}`)
	broken := plain
	broken.Analysis = json.RawMessage(`{`)
	elicit := plain
	elicit.Elicit = &store.Elicitation{Server: "s"}
	for _, tt := range []struct {
		name string
		r    store.Request
		want int
	}{{"plain", plain, 3}, {"dynamic", dynamic, 1}, {"opaque finding", opaqueFinding, 1}, {"unreadable analysis", broken, 1}, {"elicitation", elicit, 0}} {
		if got := len(scopes(tt.r)); got != tt.want {
			t.Errorf("%s: %d scopes, want %d", tt.name, got, tt.want)
		}
	}
}

// TestNothingApprovedUnseen: a command too long to show in full gets no
// approval button, only Deny and the console link.
func TestNothingApprovedUnseen(t *testing.T) {
	long := store.Request{ID: req, State: store.Pending, Action: action.NewShell("echo " + strings.Repeat("a", 3000) + "; rm -rf /srv"),
		Deadline: time.Now().Add(time.Minute)}
	m := pendingMessage(long, Caps{MaxText: 4096}, "http://console/pending#req-x", time.Now())
	for _, b := range m.Buttons {
		if strings.HasPrefix(b.ID, "w1|once|") || strings.HasPrefix(b.ID, "w1|session|") || strings.HasPrefix(b.ID, "w1|always|") {
			t.Fatalf("an approval button on a command not shown in full: %+v", m.Buttons)
		}
	}
	if !strings.Contains(m.Plain(), "answer it in the console") || strings.Contains(m.Plain(), "rm -rf /srv") {
		t.Fatalf("message: %s", m.Plain())
	}
	short := long
	short.Action = action.NewShell("rm -rf /srv")
	m = pendingMessage(short, Caps{MaxText: 4096}, "", time.Now())
	if len(m.Buttons) != 4 || m.Buttons[0].Label != "Approve once" {
		t.Fatalf("buttons: %+v", m.Buttons)
	}
}

func TestAccess(t *testing.T) {
	approvers := Allow{Users: []string{"a"}, Roles: []string{"ops"}}
	acc := Access{Rights: Rights{Approvers: approvers, Admins: Allow{Users: []string{"root"}}},
		Chats: map[string]ChatRights{"locked": {Approvers: &Allow{Users: []string{"b"}}}}}
	for _, tt := range []struct {
		chat           string
		u              User
		approve, admin bool
		talk           bool
	}{
		{"any", User{ID: "a"}, true, false, true},
		{"any", User{ID: "x", Roles: []string{"ops"}}, true, false, true},
		{"any", User{ID: "root"}, true, true, true},
		{"any", User{ID: "a", Bot: true}, false, false, false},
		{"any", User{ID: "root", Bot: true}, false, false, false},
		{"any", User{ID: "z"}, false, false, false},
		{"any", User{ID: "", Roles: []string{""}}, false, false, false},
		{"locked", User{ID: "a"}, false, false, false},
		{"locked", User{ID: "b"}, true, false, true},
		{"locked", User{ID: "root"}, true, true, true},
	} {
		r := acc.in(tt.chat)
		if r.mayApprove(tt.u) != tt.approve || r.mayAdmin(tt.u) != tt.admin || r.mayTalk(tt.u) != tt.talk {
			t.Errorf("%s %+v: approve %v admin %v talk %v", tt.chat, tt.u, r.mayApprove(tt.u), r.mayAdmin(tt.u), r.mayTalk(tt.u))
		}
	}
	if acc.Nobody() || !(Access{}).Nobody() {
		t.Error("Nobody")
	}
}

func TestParseCommand(t *testing.T) {
	for _, tt := range []struct{ in, name, args string }{
		{"/approve", "approve", ""},
		{"/approve@warden_bot all session", "approve", "all session"},
		{"/DENY  not now ", "deny", "not now"},
		{"/yolo on", "yolo", "on"},
		{"/pending", "pending", ""},
		{"/rm -rf", "", ""},
		{"approve", "", ""},
		{"!ls", "", ""},
	} {
		name, args, ok := parseCommand(strings.TrimSpace(tt.in))
		if name != tt.name || args != tt.args || ok != (tt.name != "") {
			t.Errorf("parseCommand(%q) = %q %q %v", tt.in, name, args, ok)
		}
	}
	if _, _, err := approveArgs("all please"); err == nil {
		t.Error("approveArgs took a word it does not know")
	}
	if all, s, err := approveArgs("ALL always"); err != nil || !all || s != store.Always {
		t.Errorf("approveArgs: %v %v %v", all, s, err)
	}
}

func TestValue(t *testing.T) {
	fs, err := form.Fields(json.RawMessage(`{"type":"object","properties":{
		"ok":{"type":"boolean"},"n":{"type":"integer","minimum":1},"c":{"type":"string","oneOf":[{"const":"r","title":"Red"}]},
		"s":{"type":"string"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f      int
		raw    string
		want   any
		set    bool
		failed bool
	}{
		{0, "Yes", true, true, false}, {0, "off", false, true, false}, {0, "", false, true, false}, {0, "maybe", nil, false, true},
		{1, "3", int64(3), true, false}, {1, "0", nil, false, true}, {1, " ", nil, false, true},
		{2, "red", "r", true, false}, {2, "Red", "r", true, false}, {2, "blue", nil, false, true},
		{3, "", nil, false, false},
	} {
		got, set, err := value(fs[tt.f], tt.raw)
		if (err != nil) != tt.failed || set != tt.set || got != tt.want {
			t.Errorf("value(%s, %q) = %v %v %v", fs[tt.f].Name, tt.raw, got, set, err)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{makeID(verbOnce, req), makeID(verbFill, req, 2), "w1|fv|" + req + "|99999", "w1||"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseID(s)
		if !ok {
			return
		}
		if !validRequestID(a.request) || a.arg < 0 {
			t.Fatalf("accepted %q as %+v", s, a)
		}
		// What is accepted is exactly what makeID makes.
		var back string
		switch a.verb {
		case verbFill, verbPage, verbValue:
			back = makeID(a.verb, a.request, a.arg)
		default:
			back = makeID(a.verb, a.request)
		}
		if back != s {
			t.Fatalf("%q parsed to %+v, which is %q", s, a, back)
		}
	})
}

func FuzzParseSessionKey(f *testing.F) {
	for _, s := range []string{"slack:C1", "slack:C1:1.2", "slack::", "telegram:-100:7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseSessionKey("slack", s)
		if ok && SessionKey("slack", c) != s {
			t.Fatalf("%q parsed to %+v, which is %q", s, c, SessionKey("slack", c))
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/approve all session", "/deny@bot why", "/yolo on", "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, _, ok := parseCommand(s)
		if ok && !strings.HasPrefix(strings.ToLower(s), "/"+name) {
			t.Fatalf("%q parsed as command %q", s, name)
		}
	})
}
