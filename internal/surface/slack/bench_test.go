package slack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/slack"
	"github.com/wardenhq/warden/internal/surface/slack/slacktest"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
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
	conv := chat.Conv{Chat: channel, Thread: "1700000000.000001"}
	o, err := owner.Gateway(slack.Name, channel, alice.ID)
	if err == nil {
		o, err = o.WithSession(chat.SessionKey(slack.Name, conv))
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
		req, err := r.host.Request(context.Background(), requestID(b, m))
		if err != nil {
			b.Fatal(err)
		}
		post = append(post, m.At.Sub(req.Created))
		pressed := time.Now()
		r.sl.Click(alice, channel, m.TS, buttonID(b, m, "Approve once"))
		wake = append(wake, (<-woke).Sub(pressed))
	}
	surfacetest.Report(b, "post", post)
	surfacetest.Report(b, "wake", wake)
}
