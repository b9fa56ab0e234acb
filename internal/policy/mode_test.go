package policy

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"manual", ModeManual, false},
		{"smart", ModeSmart, false},
		{"off", ModeOff, false},
		{" OFF ", ModeOff, false},
		{"Smart", ModeSmart, false},
		{"yolo", ModeManual, true},
		{"", ModeManual, true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrUnknownMode) {
			t.Errorf("ParseMode(%q) error %v does not wrap ErrUnknownMode", tt.in, err)
		}
	}
}

func TestParseUnattendedMode(t *testing.T) {
	tests := []struct {
		in      string
		want    UnattendedMode
		wantErr bool
	}{
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
	}
	for _, tt := range tests {
		got, err := ParseUnattendedMode(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseUnattendedMode(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := ParseUnattendedMode(" ASK"); !errors.Is(err, ErrAskNotHere) {
		t.Errorf("ParseUnattendedMode(ask): %v, want ErrAskNotHere", err)
	}
}

func TestParseKanbanMode(t *testing.T) {
	tests := []struct {
		in      string
		want    UnattendedMode
		wantErr bool
	}{
		{"ask", UnattendedAsk, false},
		{" Ask", UnattendedAsk, false},
		{"approve", UnattendedApprove, false},
		{"deny", UnattendedDeny, false},
		{"asks", UnattendedDeny, true},
		{"", UnattendedDeny, true},
	}
	for _, tt := range tests {
		got, err := ParseKanbanMode(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseKanbanMode(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
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
