package telegram_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/surface/chattest"
	"github.com/wardenhq/warden/internal/surface/telegram/telegramtest"
)

// BenchmarkLatency measures, through the Telegram adapter and its fake
// over loopback HTTP (long polling), the time from a request becoming
// pending (its Created time) to its message reaching the platform
// (post), and from a button press being queued at the platform to the
// asker waking with the answer (wake). Each iteration is one request.
//
//	go test -run '^$' -bench Latency -benchtime 200x ./internal/surface/telegram/
func BenchmarkLatency(b *testing.B) {
	r := newRig(b, rigOptions{})
	o := ownerFor(b, r.core, group, "42")
	chattest.Latency(b, r.host, o, func(i int) chattest.Posted {
		var m telegramtest.Message
		r.tg.Wait("the request posted", wait, func(s *telegramtest.Server) bool {
			for _, x := range s.Messages(group) {
				if x.From.ID == telegramtest.BotID && strings.Contains(x.Text, fmt.Sprintf("/srv/bench/%d<", i)) {
					m = x
					return true
				}
			}
			return false
		})
		return chattest.Posted{At: m.Sent, Text: m.Text, Approve: func() { r.tg.Click(alice, m.ID, button(b, m, "Approve once")) }}
	})
}
