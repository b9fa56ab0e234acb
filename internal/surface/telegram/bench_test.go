package telegram_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
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
		req := r.requestOf(m)
		post = append(post, m.Sent.Sub(req.Created))
		pressed := time.Now()
		r.tg.Click(alice, m.ID, button(b, m, "Approve once"))
		wake = append(wake, (<-woke).Sub(pressed))
	}
	surfacetest.Report(b, "post", post)
	surfacetest.Report(b, "wake", wake)
}
