package discord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/discord"
	"github.com/wardenhq/warden/internal/surface/discord/discordtest"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
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
	o, err := owner.Gateway(discord.Name, channel, alice.ID)
	if err == nil {
		o, err = o.WithSession(chat.SessionKey(discord.Name, chat.Conv{Chat: channel}))
	}
	if err == nil {
		o, err = o.WithChannel(r.core)
	}
	if err != nil {
		b.Fatal(err)
	}
	var post, wake []time.Duration
	for i := 0; b.Loop(); i++ {
		woke := make(chan time.Time, 1)
		go func() {
			_, err := r.host.Broker.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewShell(fmt.Sprintf("rm -rf /srv/bench/%d", i)), Rule: "bench"})
			if err != nil {
				b.Error(err)
			}
			woke <- time.Now()
		}()
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
		req := requestIn(b, r, m)
		post = append(post, m.At.Sub(req.Created))
		pressed := time.Now()
		r.dc.Click(alice, m.ID, button(b, m, "Approve once"))
		wake = append(wake, (<-woke).Sub(pressed))
	}
	surfacetest.Report(b, "post", post)
	surfacetest.Report(b, "wake", wake)
}

func requestIn(b *testing.B, r *rig, m discordtest.Message) store.Request {
	i := strings.Index(m.Content, "request ")
	if i < 0 {
		b.Fatalf("no request id in %q", m.Content)
	}
	req, err := r.host.Request(context.Background(), m.Content[i+8:i+8+26])
	if err != nil {
		b.Fatal(err)
	}
	return req
}
