package policy

import (
	"encoding/json"
	"errors"
	"testing"
)

// parseCase is a spelling and what a parser reads it as.
type parseCase[T comparable] struct {
	in      string
	want    T
	wantErr bool
}

// checkParse reads each case with parse (named name in messages) and
// wants its value and whether it erred; every error must wrap wraps,
// unless it is nil.
func checkParse[T comparable](t *testing.T, name string, parse func(string) (T, error), wraps error, cases []parseCase[T]) {
	t.Helper()
	for _, tt := range cases {
		got, err := parse(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s(%q) = %v, %v; want %v, err %v", name, tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && wraps != nil && !errors.Is(err, wraps) {
			t.Errorf("%s(%q) error %v does not wrap %v", name, tt.in, err, wraps)
		}
	}
}

func TestParseMode(t *testing.T) {
	checkParse(t, "ParseMode", ParseMode, ErrUnknownMode, []parseCase[Mode]{
		{"manual", ModeManual, false},
		{"smart", ModeSmart, false},
		{"off", ModeOff, false},
		{" OFF ", ModeOff, false},
		{"Smart", ModeSmart, false},
		{"yolo", ModeManual, true},
		{"", ModeManual, true},
	})
}

func TestParseUnattendedMode(t *testing.T) {
	// Errors wrap ErrUnknownMode, but for ask's (below).
	checkParse(t, "ParseUnattendedMode", ParseUnattendedMode, nil, []parseCase[UnattendedMode]{
		{"approve", UnattendedApprove, false},
		{"APPROVE", UnattendedApprove, false},
		{"deny", UnattendedDeny, false},
		{"Deny ", UnattendedDeny, false},
		// The reference read these as approve; warden reads anything but
		// "approve" as deny and reports the name so the caller can warn.
		{"allow", UnattendedDeny, true},
		{"yes", UnattendedDeny, true},
		{"off", UnattendedDeny, true},
		{"", UnattendedDeny, true},
		// ask is kanban_mode's alone: elsewhere it is refused.
		{"ask", UnattendedDeny, true},
	})
	if _, err := ParseUnattendedMode(" ASK"); !errors.Is(err, ErrAskNotHere) {
		t.Errorf("ParseUnattendedMode(ask): %v, want ErrAskNotHere", err)
	}
}

func TestParseKanbanMode(t *testing.T) {
	checkParse(t, "ParseKanbanMode", ParseKanbanMode, ErrUnknownMode, []parseCase[UnattendedMode]{
		{"ask", UnattendedAsk, false},
		{" Ask", UnattendedAsk, false},
		{"approve", UnattendedApprove, false},
		{"deny", UnattendedDeny, false},
		{"asks", UnattendedDeny, true},
		{"", UnattendedDeny, true},
	})
	// ask is not an approval: wherever it is combined as a mode (a
	// lineage with no channel to ask on) it denies.
	if UnattendedAsk.Approves() || DenyWins(UnattendedApprove, UnattendedAsk).Approves() {
		t.Error("ask approves")
	}
}

func TestZeroValuesFailClosed(t *testing.T) {
	var m Mode
	var u UnattendedMode
	var v Verdict
	if m != ModeManual {
		t.Errorf("zero Mode = %v, want manual", m)
	}
	if u.Approves() || u != UnattendedDeny {
		t.Errorf("zero UnattendedMode = %v, want deny", u)
	}
	if v != Deny {
		t.Errorf("zero Verdict = %v, want deny", v)
	}
	if UnattendedMode(7).Approves() {
		t.Error("out-of-range UnattendedMode approves")
	}
}

func TestDenyWins(t *testing.T) {
	A, D := UnattendedApprove, UnattendedDeny
	tests := []struct {
		in   []UnattendedMode
		want UnattendedMode
	}{
		{nil, D},
		{[]UnattendedMode{A}, A},
		{[]UnattendedMode{D}, D},
		{[]UnattendedMode{A, A, A}, A},
		{[]UnattendedMode{A, D}, D}, // kanban approve, cron deny
		{[]UnattendedMode{D, A}, D}, // and the inverse
		{[]UnattendedMode{A, UnattendedMode(9)}, D},
	}
	for _, tt := range tests {
		if got := DenyWins(tt.in...); got != tt.want {
			t.Errorf("DenyWins(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	for in, want := range map[string]Verdict{"allow": Allow, "ASK": Ask, "deny": Deny} {
		if got, err := ParseVerdict(in); got != want || err != nil {
			t.Errorf("ParseVerdict(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, err := ParseVerdict("permit"); got != Deny || !errors.Is(err, ErrUnknownMode) {
		t.Errorf("ParseVerdict(permit) = %v, %v; want deny and ErrUnknownMode", got, err)
	}
}

func TestTextRoundTrip(t *testing.T) {
	type doc struct {
		M Mode           `json:"m"`
		U UnattendedMode `json:"u"`
		V Verdict        `json:"v"`
	}
	in := doc{ModeSmart, UnattendedApprove, Ask}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"m":"smart","u":"approve","v":"ask"}` {
		t.Errorf("json = %s", b)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip = %+v, %v; want %+v", out, err, in)
	}
	var ask doc
	if err := json.Unmarshal([]byte(`{"u":"ask"}`), &ask); err != nil || ask.U != UnattendedAsk {
		t.Errorf("unmarshal ask = %v, %v", ask.U, err)
	}
	if err := json.Unmarshal([]byte(`{"u":"allow"}`), &out); err == nil {
		t.Error("unmarshal of unknown unattended mode succeeded")
	}
	if _, err := json.Marshal(doc{M: Mode(9)}); err == nil {
		t.Error("marshal of out-of-range Mode succeeded")
	}
}
