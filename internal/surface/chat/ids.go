package chat

import (
	"strconv"
	"strings"
)

// Button and form ids: "w1|VERB|REQUEST[|ARG]". They come back from the
// platform in clicks and submissions, so they are parsed strictly; the
// request id is a ULID (26 characters), so an id fits Telegram's 64
// bytes of callback data.
const idPrefix = "w1"

// Verbs of ids.
const (
	verbOnce    = "once"    // approve once
	verbSession = "session" // approve for the session
	verbAlways  = "always"  // approve always
	verbDeny    = "deny"    // deny now
	verbReason  = "reason"  // open the deny-with-reason form (form id too)
	verbFill    = "fill"    // fill in an elicitation's form (ARG: page)
	verbPage    = "page"    // a form page's id (ARG: page)
	verbDone    = "done"    // a URL-mode elicitation is done
	verbDecline = "decline" // decline an elicitation
	verbValue   = "fv"      // a question-by-question choice (ARG: option index)
	verbSkip    = "fskip"   // skip an optional question
)

// parsed is a parsed id.
type parsed struct {
	verb, request string
	arg           int
}

func makeID(verb, request string, arg ...int) string {
	s := idPrefix + "|" + verb + "|" + request
	if len(arg) > 0 {
		s += "|" + strconv.Itoa(arg[0])
	}
	return s
}

// parseID reads an id the Core made; anything else is not ok.
func parseID(s string) (parsed, bool) {
	parts := strings.Split(s, "|")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != idPrefix || !validRequestID(parts[2]) {
		return parsed{}, false
	}
	a := parsed{verb: parts[1], request: parts[2]}
	switch a.verb {
	case verbOnce, verbSession, verbAlways, verbDeny, verbReason, verbDone, verbDecline, verbSkip:
		if len(parts) != 3 {
			return parsed{}, false
		}
	case verbFill, verbPage, verbValue:
		if len(parts) != 4 {
			return parsed{}, false
		}
		n, err := strconv.Atoi(parts[3])
		if err != nil || n < 0 || n > 1000 || strconv.Itoa(n) != parts[3] {
			return parsed{}, false
		}
		a.arg = n
	default:
		return parsed{}, false
	}
	return a, true
}

// validRequestID accepts a ULID's alphabet and length.
func validRequestID(s string) bool {
	if len(s) != 26 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// SessionKey is the session key of a conversation on platform:
// PLATFORM:CHAT, or PLATFORM:CHAT:THREAD in a thread.
func SessionKey(platform string, c Conv) string {
	k := platform + ":" + c.Chat
	if c.Thread != "" {
		k += ":" + c.Thread
	}
	return k
}

// ParseSessionKey reads a session key of platform back into its
// conversation.
func ParseSessionKey(platform, key string) (Conv, bool) {
	rest, ok := strings.CutPrefix(key, platform+":")
	if !ok || rest == "" {
		return Conv{}, false
	}
	chat, thread, _ := strings.Cut(rest, ":")
	if chat == "" || strings.Contains(thread, ":") || (strings.HasSuffix(rest, ":") && thread == "") {
		return Conv{}, false
	}
	return Conv{Chat: chat, Thread: thread}, true
}

// validConvPart accepts a platform's chat or thread id: printable, no
// separator, bounded.
func validConvPart(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == ':' || r == '|' || r == 0x7f {
			return false
		}
	}
	return true
}
