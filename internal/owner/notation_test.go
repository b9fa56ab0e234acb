package owner

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want string // want "" means same as in
		kind     Kind
		depth    int
	}{
		{"cli", "", KindCLI, 1},
		{"single_query", "", KindSingleQuery, 1},
		{"gateway:web/KEY", "", KindGateway, 1},
		{"gateway:telegram/-1001/42", "", KindGateway, 1},
		{"cron:JOB", "", KindCron, 1},
		{"cron:J1,run=R9", "", KindCron, 1},
		{"kanban:TASK", "", KindKanban, 1},
		{"kanban:T1,run=R,board=B", "kanban:T1,board=B,run=R", KindKanban, 1},
		{"api", "", KindAPI, 1},
		{"api,session=abc", "", KindAPI, 1},
		{"webhook", "", KindWebhook, 1},
		{"subagent:PARENT", "", KindSubagent, 1},
		{"subagent", "", KindSubagent, 1},
		{"external:claude-code/sess-1", "", KindExternal, 1},
		{"internal", "", KindInternal, 1},
		{"kanban:T1>cron:J1", "", KindCron, 2},
		{" kanban:T1 > cron:J1 ", "kanban:T1>cron:J1", KindCron, 2},
		{"gateway:web/K,session=s1>subagent:x>cron:J", "", KindCron, 3},
		{"gateway:matrix/%21room%3Ahost", "", KindGateway, 1},
		{"gateway:matrix/%21room%3ahost", "gateway:matrix/%21room%3Ahost", KindGateway, 1},
		{"cron:%41bc", "cron:Abc", KindCron, 1}, // needless escapes are accepted
		{"gateway:web/ключ", "", KindGateway, 1},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			o, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := o.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if o.Kind() != tt.kind || len(o.Lineage()) != tt.depth {
				t.Errorf("kind %q depth %d, want %q %d", o.Kind(), len(o.Lineage()), tt.kind, tt.depth)
			}
			if o.CanAnswer() || o.Attended() {
				t.Error("Parse produced an owner a human can answer for")
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	o, err := Parse("gateway:web/K%2F1/u%40x,session=agent%3Amain>kanban:T,board=B,run=R")
	if err != nil {
		t.Fatal(err)
	}
	if o.Task() != "T" || o.Board() != "B" || o.Run() != "R" {
		t.Errorf("kanban fields: %q %q %q", o.Task(), o.Board(), o.Run())
	}
	p, _ := o.Parent()
	if p.Platform() != "web" || p.Chat() != "K/1" || p.User() != "u@x" || p.SessionKey() != "agent:main" {
		t.Errorf("gateway fields: %q %q %q %q", p.Platform(), p.Chat(), p.User(), p.SessionKey())
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string
		sentinel error
	}{
		{"", "empty owner", ErrSyntax},
		{"none", `unknown kind "none"`, ErrSyntax},
		{"CLI", `unknown kind "CLI"`, ErrSyntax},
		{"cron", "cron takes JOB, got 0", ErrSyntax},
		{"cron:", "empty id", ErrSyntax},
		{"cron:a/b", "cron takes JOB, got 2", ErrSyntax},
		{"cli:x", "cli takes no ids", ErrSyntax},
		{"gateway:web", "PLATFORM/CHAT[/USER]", ErrSyntax},
		{"gateway:web/", "empty id", ErrSyntax},
		{"gateway:a/b/c/d", "got 4", ErrSyntax},
		{"external", "AGENT[/SESSION]", ErrSyntax},
		{"cron:J,run", "want name=value", ErrSyntax},
		{"cron:J,run=", "is empty", ErrSyntax},
		{"cron:J,board=b", `cron takes no attribute "board"`, ErrSyntax},
		{"cli,run=x", `cli takes no attribute "run"`, ErrSyntax},
		{"cron:J,run=a,run=b", "given twice", ErrSyntax},
		{"cron:a b", "must be written %XX", ErrSyntax},
		{"cron:a%2", "truncated", ErrSyntax},
		{"cron:a%zz", "bad %XX escape", ErrSyntax},
		{"cron:a%0Ab", "control character", ErrInvalid},
		{"cron:a%FF", "not valid UTF-8", ErrInvalid},
		{"cli>", "segment 2: empty owner", ErrSyntax},
		{">cli", "segment 1: empty owner", ErrSyntax},
		{strings.Repeat("cli>", MaxDepth) + "cli", "deeper than", ErrSyntax},
		{strings.Repeat("x", maxNotationLen+1), "longer than", ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			o, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tt.in, o)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tt.sentinel)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// genID draws any id a constructor accepts: arbitrary Unicode without
// control characters, including every notation metacharacter.
func genID(required bool) *rapid.Generator[string] {
	min := 0
	if required {
		min = 1
	}
	meta := rapid.SampledFrom([]rune(":/,=>% %-_.~+@ключ\u00a0\u2028"))
	r := rapid.OneOf(meta, rapid.Rune())
	return rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(r, min, 12).Draw(t, "runes"))
	}).Filter(func(s string) bool { return checkID("id", s, required) == nil })
}

func genSegment(t *rapid.T) Owner {
	var o Owner
	var err error
	switch k := rapid.SampledFrom(kinds).Draw(t, "kind"); k {
	case KindGateway:
		o, err = Gateway(genID(true).Draw(t, "platform"), genID(true).Draw(t, "chat"), genID(false).Draw(t, "user"))
	case KindCron:
		o, err = Cron(genID(true).Draw(t, "job"), genID(false).Draw(t, "run"))
	case KindKanban:
		o, err = Kanban(genID(false).Draw(t, "board"), genID(true).Draw(t, "task"), genID(false).Draw(t, "run"))
	case KindSubagent:
		o, err = Subagent(genID(false).Draw(t, "id"))
	case KindExternal:
		o, err = External(genID(true).Draw(t, "agent"), genID(false).Draw(t, "session"))
	default:
		o = newOwner(data{kind: k})
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := genID(false).Draw(t, "session"); s != "" {
		o, err = o.WithSession(s)
		if err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// TestParseFormatRoundTrip: every owner a constructor can build prints
// to a notation that parses back to the same owner and the same text.
func TestParseFormatRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "depth")
		var o Owner
		for i := range n {
			seg := genSegment(t)
			if i > 0 {
				var err error
				if seg, err = seg.WithParent(o); err != nil {
					t.Fatal(err)
				}
			}
			o = seg
		}
		s := o.String()
		p, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if !p.Equal(o) {
			t.Fatalf("Parse(%q) = %v, not equal to the original", s, p)
		}
		if p.String() != s {
			t.Fatalf("String(Parse(%q)) = %q", s, p.String())
		}
	})
}

// TestParseArbitrary: Parse never panics, and whatever it accepts is in
// canonical form after one round.
func TestParseArbitrary(t *testing.T) {
	alphabet := rapid.SampledFrom([]rune("clironkabgtewy_:/,=>%0Fx1 \n"))
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.String(),
			rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOfN(alphabet, 0, 30).Draw(t, "r")) }),
		).Draw(t, "s")
		o, err := Parse(s)
		if err != nil {
			return
		}
		c := o.String()
		p, err := Parse(c)
		if err != nil || !p.Equal(o) || p.String() != c {
			t.Fatalf("Parse(%q) = %q, which does not round trip: %v", s, c, err)
		}
	})
}

// TestLongestOwnerParses builds the longest owner String can print and
// checks Parse's length bound admits it.
func TestLongestOwnerParses(t *testing.T) {
	must := mk(t)
	id := strings.Repeat(" ", maxIDLen) // escapes to three bytes each
	o := must(must(Kanban(id, id, id)).WithSession(id))
	for range MaxDepth - 1 {
		k := must(must(Kanban(id, id, id)).WithSession(id))
		o = must(k.WithParent(o))
	}
	s := o.String()
	p, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse of a %d-byte notation: %v", len(s), err)
	}
	if !p.Equal(o) {
		t.Error("longest owner does not round trip")
	}
}
