package owner

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fakeChannel is an answer channel for tests.
type fakeChannel string

func (f fakeChannel) Surface() string { return string(f) }

// mk returns a helper that unwraps a constructor's result or fails t.
func mk(t *testing.T) func(Owner, error) Owner {
	return func(o Owner, err error) Owner {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name    string
		build   func() (Owner, error)
		want    string
		wantErr string
	}{
		{"cli", func() (Owner, error) { return CLI(), nil }, "cli", ""},
		{"single query", func() (Owner, error) { return SingleQuery(), nil }, "single_query", ""},
		{"api", func() (Owner, error) { return API(), nil }, "api", ""},
		{"webhook", func() (Owner, error) { return Webhook(), nil }, "webhook", ""},
		{"internal", func() (Owner, error) { return Internal(), nil }, "internal", ""},
		{"gateway", func() (Owner, error) { return Gateway("telegram", "-100", "42") }, "gateway:telegram/-100/42", ""},
		{"gateway without user", func() (Owner, error) { return Gateway("web", "KEY", "") }, "gateway:web/KEY", ""},
		{"gateway without chat", func() (Owner, error) { return Gateway("web", "", "") }, "", "gateway chat is required"},
		{"gateway without platform", func() (Owner, error) { return Gateway("", "c", "") }, "", "gateway platform is required"},
		{"cron", func() (Owner, error) { return Cron("nightly", "2026-01-02") }, "cron:nightly,run=2026-01-02", ""},
		{"cron without run", func() (Owner, error) { return Cron("J1", "") }, "cron:J1", ""},
		{"cron without job", func() (Owner, error) { return Cron("", "r") }, "", "cron job is required"},
		{"kanban", func() (Owner, error) { return Kanban("main", "T1", "R1") }, "kanban:T1,board=main,run=R1", ""},
		{"kanban task only", func() (Owner, error) { return Kanban("", "T1", "") }, "kanban:T1", ""},
		{"kanban without task", func() (Owner, error) { return Kanban("b", "", "") }, "", "kanban task is required"},
		{"subagent", func() (Owner, error) { return Subagent("s1") }, "subagent:s1", ""},
		{"subagent anonymous", func() (Owner, error) { return Subagent("") }, "subagent", ""},
		{"external", func() (Owner, error) { return External("claude-code", "abc") }, "external:claude-code/abc", ""},
		{"external without session", func() (Owner, error) { return External("codex", "") }, "external:codex", ""},
		{"external without agent", func() (Owner, error) { return External("", "abc") }, "", "external agent is required"},
		{"escaped ids", func() (Owner, error) { return Gateway("matrix", "!room:host/x", "@u>v") }, "gateway:matrix/%21room%3Ahost%2Fx/@u%3Ev", ""},
		{"control character", func() (Owner, error) { return Cron("a\nb", "") }, "", "control character"},
		{"invalid utf-8", func() (Owner, error) { return Cron("a\xffb", "") }, "", "not valid UTF-8"},
		{"too long", func() (Owner, error) { return Cron(strings.Repeat("x", maxIDLen+1), "") }, "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.build()
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got %v, want error containing %q", o, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q: want ErrInvalid containing %q", err, tt.wantErr)
				}
				if o.Valid() {
					t.Errorf("failed constructor returned a valid owner %v", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if !o.Valid() || o.CanAnswer() || o.Attended() {
				t.Errorf("%v: Valid %v CanAnswer %v Attended %v; want a valid owner no one can answer for yet",
					o, o.Valid(), o.CanAnswer(), o.Attended())
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	must := mk(t)
	g := must(Gateway("slack", "C1", "U1"))
	if g.Kind() != KindGateway || g.Platform() != "slack" || g.Chat() != "C1" || g.User() != "U1" {
		t.Errorf("gateway accessors: %q %q %q %q", g.Kind(), g.Platform(), g.Chat(), g.User())
	}
	k := must(Kanban("b", "t", "r"))
	if k.Board() != "b" || k.Task() != "t" || k.Run() != "r" {
		t.Errorf("kanban accessors: %q %q %q", k.Board(), k.Task(), k.Run())
	}
	c := must(Cron("j", "r"))
	if c.Job() != "j" || c.Run() != "r" {
		t.Errorf("cron accessors: %q %q", c.Job(), c.Run())
	}
	e := must(External("a", "s"))
	if e.Agent() != "a" || e.ExternalSession() != "s" {
		t.Errorf("external accessors: %q %q", e.Agent(), e.ExternalSession())
	}
	s := must(Subagent("x"))
	if s.SubagentID() != "x" {
		t.Errorf("SubagentID() = %q", s.SubagentID())
	}
	var z Owner
	if z.Kind() != "" || z.SessionKey() != "" || z.Task() != "" || z.Valid() {
		t.Errorf("zero owner accessors not empty")
	}
	if _, ok := z.Parent(); ok {
		t.Error("zero owner has a parent")
	}
	if z.Lineage() != nil {
		t.Error("zero owner has a lineage")
	}
}

func TestWithReturnsNewValue(t *testing.T) {
	must := mk(t)
	base := CLI()
	withSess := must(base.WithSession("s1"))
	withChan := must(withSess.WithChannel(fakeChannel("terminal")))
	if base.SessionKey() != "" || base.CanAnswer() {
		t.Errorf("original changed: session %q, can answer %v", base.SessionKey(), base.CanAnswer())
	}
	if withSess.CanAnswer() {
		t.Error("WithChannel changed its receiver")
	}
	if withChan.SessionKey() != "s1" || !withChan.CanAnswer() {
		t.Errorf("derived owner lost fields: %v", withChan)
	}
	if ch, ok := withChan.Channel(); !ok || ch.Surface() != "terminal" {
		t.Errorf("Channel() = %v, %v", ch, ok)
	}
}

func TestWithErrors(t *testing.T) {
	must := mk(t)
	cron := must(Cron("J", ""))
	kanban := must(Kanban("", "T", ""))
	child := must(Subagent("c"))
	parented := must(child.WithParent(CLI()))
	deep := CLI()
	for range MaxDepth - 1 {
		deep = must(must(Subagent("")).WithParent(deep))
	}
	tests := []struct {
		name string
		fn   func() (Owner, error)
		want string
	}{
		{"nil channel", func() (Owner, error) { return CLI().WithChannel(nil) }, "nil channel"},
		{"channel on cron", func() (Owner, error) { return cron.WithChannel(fakeChannel("x")) }, "cron owners cannot be answered"},
		{"nil channel on kanban", func() (Owner, error) { return kanban.WithChannel(nil) }, "nil channel"},
		{"channel on single_query", func() (Owner, error) { return SingleQuery().WithChannel(fakeChannel("x")) }, "cannot be answered"},
		{"channel on zero", func() (Owner, error) { return Owner{}.WithChannel(fakeChannel("x")) }, "zero owner"},
		{"session on zero", func() (Owner, error) { return Owner{}.WithSession("s") }, "zero owner"},
		{"bad session", func() (Owner, error) { return CLI().WithSession("a\x00") }, "control character"},
		{"zero parent", func() (Owner, error) { return child.WithParent(Owner{}) }, "zero parent"},
		{"re-parent", func() (Owner, error) { return parented.WithParent(cron) }, "already has parent cli"},
		{"parent of zero", func() (Owner, error) { return Owner{}.WithParent(cron) }, "zero owner"},
		{"too deep", func() (Owner, error) { return child.WithParent(deep) }, "deeper than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.fn()
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want ErrInvalid containing %q", o, err, tt.want)
			}
		})
	}
	if len(deep.Lineage()) != MaxDepth {
		t.Errorf("deep lineage has %d elements, want %d", len(deep.Lineage()), MaxDepth)
	}
}

func TestAttendance(t *testing.T) {
	must := mk(t)
	term := fakeChannel("terminal")
	att := func(o Owner) Owner { return must(o.WithChannel(term)) }
	child := func(parent Owner, c Owner) Owner { return must(c.WithParent(parent)) }
	cron := must(Cron("J1", ""))
	kanban := must(Kanban("", "T1", ""))
	sub := must(Subagent(""))
	gw := must(Gateway("web", "K", ""))

	tests := []struct {
		name                       string
		o                          Owner
		unattended, lineage, asked bool
	}{
		{"zero", Owner{}, true, true, false},
		{"cli without channel", CLI(), false, false, false},
		{"cli with terminal", att(CLI()), false, false, true},
		{"gateway with channel", att(gw), false, false, true},
		{"single query", SingleQuery(), true, true, false},
		{"cron", cron, true, true, false},
		{"kanban", kanban, true, true, false},
		{"internal", Internal(), true, true, false},
		{"api without notifier", API(), true, true, false},
		{"api with notifier", att(API()), false, false, true},
		{"webhook without channel", Webhook(), true, true, false},
		{"webhook with channel", att(Webhook()), false, false, true},
		{"external with elicitation", att(must(External("claude", ""))), false, false, true},
		{"subagent of attended cli", child(att(CLI()), att(sub)), false, false, true},
		{"subagent of cron, with a channel", child(cron, att(sub)), false, true, false},
		{"cron started by kanban", child(kanban, cron), true, true, false},
		{"subagent of subagent of kanban", child(child(kanban, sub), att(sub)), false, true, false},
		{"subagent without its own channel", child(att(CLI()), sub), false, false, false},
		// A kanban run the host attached its console to (kanban_mode
		// ask) is attended; nothing it starts or delegates gains from it
		// beyond what it has.
		{"kanban with the console", att(kanban), false, false, true},
		{"cron started by attended kanban", child(att(kanban), cron), true, true, false},
		{"subagent of attended kanban, no channel", child(att(kanban), sub), false, false, false},
		{"subagent of attended kanban, with one", child(att(kanban), att(sub)), false, false, true},
		{"attended kanban under cron", child(cron, att(kanban)), false, true, false},
		{"attended kanban under bare kanban", child(kanban, att(kanban)), false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.o.Unattended(); got != tt.unattended {
				t.Errorf("Unattended() = %v, want %v", got, tt.unattended)
			}
			if got := tt.o.LineageUnattended(); got != tt.lineage {
				t.Errorf("LineageUnattended() = %v, want %v", got, tt.lineage)
			}
			if got := tt.o.Attended(); got != tt.asked {
				t.Errorf("Attended() = %v, want %v", got, tt.asked)
			}
		})
	}
}

// TestZeroOwnerNeverAttended: the zero Owner is what code gets when it
// forgot to bind one; it must never look like someone a human answers
// for, in any way a caller might check (invariant 2).
func TestZeroOwnerNeverAttended(t *testing.T) {
	var z Owner
	if z.Attended() || z.CanAnswer() || z.Valid() {
		t.Errorf("zero owner: Attended %v CanAnswer %v Valid %v", z.Attended(), z.CanAnswer(), z.Valid())
	}
	if !z.Unattended() || !z.LineageUnattended() {
		t.Error("zero owner is not unattended")
	}
	if _, ok := z.Channel(); ok {
		t.Error("zero owner has a channel")
	}
	if _, err := z.WithChannel(fakeChannel("x")); err == nil {
		t.Error("a channel could be attached to the zero owner")
	}
	if _, ok := From(With(context.Background(), z)); ok {
		t.Error("From reports the zero owner as present")
	}
	// Nothing can decode an Owner into existence: no exported fields, no
	// unmarshalers.
	typ := reflect.TypeFor[Owner]()
	for f := range typ.Fields() {
		if f.IsExported() {
			t.Errorf("Owner has exported field %s", f.Name)
		}
	}
	for _, iface := range []reflect.Type{
		reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
	} {
		if reflect.PointerTo(typ).Implements(iface) {
			t.Errorf("*Owner implements %v", iface)
		}
	}
	if z.String() != "none" {
		t.Errorf("zero String() = %q", z.String())
	}
	if _, err := Parse(z.String()); err == nil {
		t.Error("Parse accepted the zero owner's String")
	}
}

func TestLineage(t *testing.T) {
	must := mk(t)
	kanban := must(Kanban("", "T1", ""))
	cron := must(must(Cron("J1", "")).WithParent(kanban))
	sub := must(must(Subagent("s")).WithParent(cron))
	got := sub.Lineage()
	want := []string{"kanban:T1", "cron:J1", "subagent:s"}
	if len(got) != len(want) {
		t.Fatalf("Lineage() has %d elements, want %d", len(got), len(want))
	}
	for i, o := range got {
		if k := o.Lineage(); len(k) != i+1 {
			t.Errorf("element %d has lineage %d long", i, len(k))
		}
		seg := o.String()[strings.LastIndex(o.String(), ">")+1:]
		if seg != want[i] {
			t.Errorf("Lineage()[%d] = %q, want %q", i, seg, want[i])
		}
	}
	if !got[2].Equal(sub) || !got[0].Equal(kanban) {
		t.Error("Lineage() does not end with self and start with the root")
	}
	if p, ok := sub.Parent(); !ok || !p.Equal(cron) {
		t.Errorf("Parent() = %v, %v", p, ok)
	}
	if s := sub.String(); s != "kanban:T1>cron:J1>subagent:s" {
		t.Errorf("String() = %q", s)
	}
}

func TestEqual(t *testing.T) {
	must := mk(t)
	a := must(must(Cron("J", "R")).WithSession("s"))
	b := must(Parse("cron:J,run=R,session=s"))
	if !a.Equal(b) || !b.Equal(a) {
		t.Error("equal owners not Equal")
	}
	if a.Equal(must(Cron("J", "R"))) {
		t.Error("owners with different sessions Equal")
	}
	withParent := must(a.WithParent(CLI()))
	if a.Equal(withParent) || withParent.Equal(a) {
		t.Error("owners with different lineages Equal")
	}
	if a.Equal(Owner{}) || !(Owner{}).Equal(Owner{}) {
		t.Error("zero owner equality wrong")
	}
	c1 := must(CLI().WithChannel(fakeChannel("a")))
	c2 := must(CLI().WithChannel(fakeChannel("b")))
	if !c1.Equal(c2) || c1.Equal(CLI()) {
		t.Error("channels should compare by presence")
	}
}

func TestContext(t *testing.T) {
	must := mk(t)
	ctx := context.Background()
	if _, ok := From(ctx); ok {
		t.Fatal("From found an owner in an empty context")
	}
	cron := must(Cron("J", ""))
	chat := must(must(Gateway("web", "K", "")).WithChannel(fakeChannel("web")))
	cctx := With(ctx, cron)
	gctx := With(ctx, chat)
	if o, ok := From(cctx); !ok || !o.Equal(cron) {
		t.Errorf("From(cron ctx) = %v, %v", o, ok)
	}
	if o, ok := From(gctx); !ok || !o.Equal(chat) || !o.Attended() {
		t.Errorf("From(chat ctx) = %v, %v", o, ok)
	}
	// Sibling contexts do not see each other's owner.
	if o, _ := From(cctx); o.Attended() {
		t.Error("cron context sees an attended owner")
	}
	// An inner binding wins; the zero owner masks.
	inner := With(cctx, chat)
	if o, _ := From(inner); !o.Equal(chat) {
		t.Errorf("inner binding lost: %v", o)
	}
	if o, ok := From(With(cctx, Owner{})); ok {
		t.Errorf("zero owner did not mask the outer owner: %v", o)
	}
}

func TestMarshalJSON(t *testing.T) {
	must := mk(t)
	kanban := must(Kanban("main", "T1", "R1"))
	cron := must(must(must(Cron("J1", "")).WithSession("cron_J1")).WithParent(kanban))
	b, err := cron.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"owner":"kanban:T1,board=main,run=R1>cron:J1,session=cron_J1","kind":"cron","session":"cron_J1","job":"J1",` +
		`"can_answer":false,"unattended":true,"lineage_unattended":true,` +
		`"parent":{"owner":"kanban:T1,board=main,run=R1","kind":"kanban","run":"R1","board":"main","task":"T1",` +
		`"can_answer":false,"unattended":true,"lineage_unattended":true}}`
	if string(b) != want {
		t.Errorf("json:\n got %s\nwant %s", b, want)
	}

	chat := must(must(Gateway("telegram", "C", "U")).WithChannel(fakeChannel("telegram")))
	b, _ = json.Marshal(chat)
	want = `{"owner":"gateway:telegram/C/U","kind":"gateway","platform":"telegram","chat":"C","user":"U",` +
		`"can_answer":true,"surface":"telegram","unattended":false,"lineage_unattended":false}`
	if string(b) != want {
		t.Errorf("json:\n got %s\nwant %s", b, want)
	}

	b, _ = json.Marshal(struct{ O Owner }{})
	if string(b) != `{"O":null}` {
		t.Errorf("zero owner json = %s", b)
	}
}

func TestKinds(t *testing.T) {
	ks := Kinds()
	if len(ks) != 10 {
		t.Fatalf("Kinds() has %d kinds", len(ks))
	}
	for _, k := range ks {
		if !k.Valid() || k.String() == "" {
			t.Errorf("kind %q not valid", k)
		}
	}
	ks[0] = "mutated"
	if Kinds()[0] != KindCLI {
		t.Error("Kinds() exposes the package's slice")
	}
	if Kind("").Valid() || Kind("CLI").Valid() {
		t.Error("invalid kinds reported valid")
	}
}
