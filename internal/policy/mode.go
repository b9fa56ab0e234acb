package policy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownMode is returned when a mode or verdict name is not one of the
// documented values. Config loading branches on it to warn instead of
// failing where the reference system's users expect a lenient reading.
var ErrUnknownMode = errors.New("unknown mode")

// Mode is approvals.mode: how dangerous actions of attended owners are
// decided. Unattended owners follow their UnattendedMode instead.
//
// The zero value is ModeManual, so a Mode nobody set asks a human rather
// than bypassing the approval layer.
type Mode uint8

// Modes of approvals.mode.
const (
	// ModeManual asks a human on the owner's surfaces.
	ModeManual Mode = iota
	// ModeSmart lets a guardian model allow, deny or escalate to a human.
	ModeSmart
	// ModeOff allows dangerous actions without asking. The floors
	// (hardline, deny rules) still apply first.
	ModeOff
)

var modeNames = [...]string{ModeManual: "manual", ModeSmart: "smart", ModeOff: "off"}

// String returns the config spelling of m.
func (m Mode) String() string { return spelling(modeNames[:], m, "Mode") }

// ParseMode reads a config spelling, ignoring case and surrounding space.
// An unknown name yields ModeManual together with an error wrapping
// ErrUnknownMode: the caller may warn and go on with the safe reading.
func ParseMode(s string) (Mode, error) {
	if m, ok := lookup[Mode](modeNames[:], s); ok {
		return m, nil
	}
	return ModeManual, fmt.Errorf("approvals mode %q (want manual, smart or off): %w", s, ErrUnknownMode)
}

// MarshalText implements encoding.TextMarshaler so modes print by name in
// JSON and YAML.
func (m Mode) MarshalText() ([]byte, error) { return marshalName(modeNames[:], m) }

// UnmarshalText implements encoding.TextUnmarshaler. Unlike ParseMode it
// rejects unknown names: structured input has no room for a warning.
func (m *Mode) UnmarshalText(b []byte) error { return unmarshalName(m, b, ParseMode) }

// UnattendedMode is what an owner nobody can answer for gets when an
// action would otherwise need a human: cron_mode, kanban_mode,
// single_query_mode and unattended_mode.
//
// The zero value is UnattendedDeny, so anything unset or unknown fails
// closed.
type UnattendedMode uint8

// Unattended modes.
const (
	// UnattendedDeny denies the action at once, without waiting.
	UnattendedDeny UnattendedMode = iota
	// UnattendedApprove allows the action. The floors still apply first.
	UnattendedApprove
	// UnattendedAsk is valid for approvals.kanban_mode only: the host
	// attaches its web console as the kanban run's answer channel, so a
	// human is asked. It is not an approval: where no channel is
	// attached (no console served, or a run this owner started, such as
	// a cron run) it denies, like UnattendedDeny.
	UnattendedAsk
)

var unattendedNames = [...]string{UnattendedDeny: "deny", UnattendedApprove: "approve", UnattendedAsk: "ask"}

// String returns the config spelling of m.
func (m UnattendedMode) String() string { return spelling(unattendedNames[:], m, "UnattendedMode") }

// Approves reports whether m lets the action through. Only
// UnattendedApprove does; every other value, including out-of-range ones,
// denies.
func (m UnattendedMode) Approves() bool { return m == UnattendedApprove }

// ErrAskNotHere is returned for "ask" where only deny or approve is
// valid: every unattended mode but kanban_mode. A cron run, a
// single-query run or an API caller has no console the host could
// attach, so "ask" would mean a question nobody can answer (invariant 9).
var ErrAskNotHere = errors.New(`"ask" is only valid for approvals.kanban_mode`)

// ParseUnattendedMode reads a config spelling, ignoring case and
// surrounding space. Only "approve" approves. "ask" is refused with
// ErrAskNotHere (see ParseKanbanMode). Any other name yields
// UnattendedDeny, with an error wrapping ErrUnknownMode unless the name
// was "deny", so the caller can warn about a likely typo while the
// reading stays closed.
func ParseUnattendedMode(s string) (UnattendedMode, error) {
	switch m, ok := lookup[UnattendedMode](unattendedNames[:], s); {
	case !ok:
		return UnattendedDeny, fmt.Errorf("unattended mode %q (want deny or approve): %w", s, ErrUnknownMode)
	case m == UnattendedAsk:
		return UnattendedDeny, fmt.Errorf("unattended mode %q (want deny or approve): %w", s, ErrAskNotHere)
	default:
		return m, nil
	}
}

// ParseKanbanMode is ParseUnattendedMode for approvals.kanban_mode,
// which also takes "ask".
func ParseKanbanMode(s string) (UnattendedMode, error) {
	if strings.ToLower(strings.TrimSpace(s)) == "ask" {
		return UnattendedAsk, nil
	}
	m, err := ParseUnattendedMode(s)
	if err != nil {
		err = fmt.Errorf("kanban mode %q (want deny, approve or ask): %w", s, ErrUnknownMode)
	}
	return m, err
}

// MarshalText implements encoding.TextMarshaler.
func (m UnattendedMode) MarshalText() ([]byte, error) { return marshalName(unattendedNames[:], m) }

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are
// an error. It reads "ask" too (so MarshalText round trips); a config
// key that must not be ask is checked where it is read
// (ParseUnattendedMode).
func (m *UnattendedMode) UnmarshalText(b []byte) error {
	return unmarshalName(m, b, ParseKanbanMode)
}

// DenyWins combines the modes that apply along an owner's lineage: the
// result approves only if every mode approves. With no modes at all it
// denies, because an empty lineage means nobody vouched for the action
// (invariant 5: delegation never widens trust).
func DenyWins(modes ...UnattendedMode) UnattendedMode {
	if len(modes) == 0 {
		return UnattendedDeny
	}
	for _, m := range modes {
		if !m.Approves() {
			return UnattendedDeny
		}
	}
	return UnattendedApprove
}

// Verdict is what a rule says about an action: the three outcomes of
// DESIGN.md's decision table. The zero value is Deny, so a verdict nobody
// set fails closed.
type Verdict uint8

// Verdicts.
const (
	Deny Verdict = iota
	Ask
	Allow
)

var verdictNames = [...]string{Deny: "deny", Ask: "ask", Allow: "allow"}

// String returns the lower-case name used in config files and JSON.
func (v Verdict) String() string { return spelling(verdictNames[:], v, "Verdict") }

// ParseVerdict reads "allow", "ask" or "deny", ignoring case and
// surrounding space. Anything else is an error wrapping ErrUnknownMode,
// and the returned verdict is Deny.
func ParseVerdict(s string) (Verdict, error) {
	if v, ok := lookup[Verdict](verdictNames[:], s); ok {
		return v, nil
	}
	return Deny, fmt.Errorf("verdict %q (want allow, ask or deny): %w", s, ErrUnknownMode)
}

// MarshalText implements encoding.TextMarshaler.
func (v Verdict) MarshalText() ([]byte, error) { return marshalName(verdictNames[:], v) }

// UnmarshalText implements encoding.TextUnmarshaler; unknown names are
// an error.
func (v *Verdict) UnmarshalText(b []byte) error { return unmarshalName(v, b, ParseVerdict) }

// The three enums (Mode, UnattendedMode, Verdict) are spelled in config
// and JSON by a table of names indexed by value.

// spelling returns v's name in names, or TYPE(N) for a value out of
// range.
func spelling[T ~uint8](names []string, v T, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// lookup finds s, ignoring case and surrounding space, in names.
func lookup[T ~uint8](names []string, s string) (T, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range names {
		if n == s {
			return T(i), true
		}
	}
	return 0, false
}

// marshalName is MarshalText of v: its name, or an error for a value out
// of range.
func marshalName[T interface {
	~uint8
	fmt.Stringer
}](names []string, v T) ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("marshal %v: %w", v, ErrUnknownMode)
	}
	return []byte(v.String()), nil
}

// unmarshalName is UnmarshalText of *dst, read with parse; unknown names
// are an error.
func unmarshalName[T any](dst *T, b []byte, parse func(string) (T, error)) error {
	v, err := parse(string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
