package discord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/chattest"
	"github.com/wardenhq/warden/internal/surface/discord"
	"github.com/wardenhq/warden/internal/surface/discord/discordtest"
)

// BenchmarkLatency measures, through the Discord adapter and its fake
// (REST over loopback HTTP, events over the gateway websocket), the time
// from a request becoming pending to its message reaching the platform
// (post), and from a button press being dispatched on the gateway to the
// asker waking with the answer (wake; it includes the interaction's
// response).
//
//	go test -run '^$' -bench Latency -benchtime 200x ./internal/surface/discord/
func BenchmarkLatency(b *testing.B) {
	r := newRig(b)
	o := chattest.Owner(b, r.core, discord.Name, chat.Conv{Chat: channel}, alice.ID)
	chattest.Latency(b, r.host, o, func(i int) chattest.Posted {
		var m discordtest.Message
		r.dc.Wait("the request posted", wait, func(s *discordtest.Server) bool {
			for _, x := range s.Messages(channel) {
				if x.Author == discordtest.BotID && strings.Contains(x.Content, fmt.Sprintf("/srv/bench/%d\n", i)) {
					m = x
					return true
				}
			}
			return false
		})
		return chattest.Posted{At: m.At, Text: m.Content, Approve: func() { r.dc.Click(alice, m.ID, button(b, m, "Approve once")) }}
	})
}
