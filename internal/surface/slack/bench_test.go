package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/chattest"
	"github.com/wardenhq/warden/internal/surface/slack"
	"github.com/wardenhq/warden/internal/surface/slack/slacktest"
)

// BenchmarkLatency measures, through the Slack adapter and its fake
// (Web API over loopback HTTP, events over the Socket Mode websocket),
// the time from a request becoming pending to its message reaching the
// platform (post), and from a button press being sent on the socket to
// the asker waking with the answer (wake).
//
//	go test -run '^$' -bench Latency -benchtime 200x ./internal/surface/slack/
func BenchmarkLatency(b *testing.B) {
	r := newRig(b)
	o := chattest.Owner(b, r.core, slack.Name, chat.Conv{Chat: channel, Thread: "1700000000.000001"}, alice.ID)
	chattest.Latency(b, r.host, o, func(i int) chattest.Posted {
		var m slacktest.Message
		r.sl.Wait("the request posted", wait, func(s *slacktest.Server) bool {
			for _, x := range s.Messages(channel) {
				if x.User == "" && strings.Contains(x.Text, fmt.Sprintf("/srv/bench/%d\n", i)) {
					m = x
					return true
				}
			}
			return false
		})
		return chattest.Posted{At: m.At, Text: m.Text, Approve: func() { r.sl.Click(alice, channel, m.TS, buttonID(b, m, "Approve once")) }}
	})
}
