package guardian

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/wardenhq/warden/internal/gate"
)

// maxReason bounds the reason kept from a reply; it is shown to the
// agent with a denial.
const maxReason = 300

// errReply is wrapped by parse errors: the model answered, but not with
// a verdict.
var errReply = errors.New("malformed verdict")

// parseVerdict reads exactly one JSON object with the string members
// "verdict" (approve, deny or escalate, in lower case) and "reason",
// each once, and nothing else: no other members, no duplicate keys
// (encoding/json would keep the last), no text around it, no code
// fence. Anything else is an error, which the caller treats as a
// failure and escalates.
func parseVerdict(text string) (gate.GuardianVerdict, string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", "", fmt.Errorf("%w: empty reply", errReply)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", "", fmt.Errorf("%w: not a JSON object", errReply)
	}
	var verdict, reason *string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("%w: %w", errReply, err)
		}
		key, _ := tok.(string)
		var dst **string
		switch key {
		case "verdict":
			dst = &verdict
		case "reason":
			dst = &reason
		default:
			return "", "", fmt.Errorf("%w: unexpected member %q", errReply, clip(key, 40))
		}
		if *dst != nil {
			return "", "", fmt.Errorf("%w: duplicate member %q", errReply, key)
		}
		tok, err = dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("%w: %w", errReply, err)
		}
		s, ok := tok.(string)
		if !ok {
			return "", "", fmt.Errorf("%w: %q is not a string", errReply, key)
		}
		*dst = &s
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", "", fmt.Errorf("%w: unterminated object", errReply)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", "", fmt.Errorf("%w: text after the object", errReply)
	}
	if verdict == nil || reason == nil {
		return "", "", fmt.Errorf("%w: verdict and reason are required", errReply)
	}
	v := gate.GuardianVerdict(*verdict)
	switch v {
	case gate.GuardianApprove, gate.GuardianDeny, gate.GuardianEscalate:
	default:
		return "", "", fmt.Errorf("%w: unknown verdict %q", errReply, clip(*verdict, 40))
	}
	return v, clean(*reason), nil
}

// clean makes a model-written reason safe to show: controls become
// spaces, runs of space collapse, and it is clipped.
func clean(s string) string {
	var b bytes.Buffer
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Bidi_Control, r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return clip(strings.TrimSpace(b.String()), maxReason)
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
