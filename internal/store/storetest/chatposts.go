package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/internal/store"
)

// RunChatPosts is the conformance suite for store.ChatPosts. open
// returns a new, empty store for each subtest; if it is an io.Closer,
// RunChatPosts closes it when the subtest ends.
//
// Besides the interface's comments, the suite pins down:
//   - a request is claimed once per platform, even by concurrent
//     claimers, and independently on each platform;
//   - a dropped post can be claimed again (a request still pending whose
//     message could not be sent is posted on the next try).
func RunChatPosts(t *testing.T, open func(t *testing.T) store.ChatPosts) {
	t.Helper()
	runCases(t, open, chatPostTests)
}

var chatPostTests = []testCase[store.ChatPosts]{
	{"claim once, set, read, drop", func(t *testing.T, s store.ChatPosts) {
		ctx := context.Background()
		p := store.ChatPost{Platform: "telegram", Request: "r1", Chat: "-100", Thread: "7", Posted: base}
		if ok, err := s.ClaimChatPost(ctx, p); err != nil || !ok {
			t.Fatalf("first claim: %v %v", ok, err)
		}
		if ok, err := s.ClaimChatPost(ctx, p); err != nil || ok {
			t.Fatalf("second claim: %v %v", ok, err)
		}
		if err := s.SetChatMessage(ctx, "telegram", "r1", "42"); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetChatPost(ctx, "telegram", "r1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Message != "42" || got.Chat != "-100" || got.Thread != "7" || !got.Posted.Equal(base) {
			t.Fatalf("read back %+v", got)
		}
		if err := s.SetChatMessage(ctx, "telegram", "nope", "1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("set on a missing post: %v", err)
		}
		if _, err := s.GetChatPost(ctx, "slack", "r1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another platform's post: %v", err)
		}
		if err := s.DropChatPost(ctx, "telegram", "r1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DropChatPost(ctx, "telegram", "r1"); err != nil {
			t.Fatalf("drop twice: %v", err)
		}
		if ok, err := s.ClaimChatPost(ctx, p); err != nil || !ok {
			t.Fatalf("claim after drop: %v %v", ok, err)
		}
	}},
	{"platforms apart, oldest first", func(t *testing.T, s store.ChatPosts) {
		ctx := context.Background()
		for i, p := range []store.ChatPost{
			{Platform: "slack", Request: "b", Chat: "C1", Thread: "1.2", Posted: base.Add(2)},
			{Platform: "slack", Request: "a", Chat: "C1", Posted: base.Add(1)},
			{Platform: "discord", Request: "a", Chat: "9", Posted: base},
		} {
			if ok, err := s.ClaimChatPost(ctx, p); err != nil || !ok {
				t.Fatalf("claim %d: %v %v", i, ok, err)
			}
		}
		ps, err := s.ChatPostsOf(ctx, "slack")
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].Request != "a" || ps[1].Request != "b" {
			t.Fatalf("slack posts: %+v", ps)
		}
		if ps, _ := s.ChatPostsOf(ctx, "telegram"); ps == nil || len(ps) != 0 {
			t.Fatalf("no posts must be an empty list: %#v", ps)
		}
	}},
	{"concurrent claimers: one wins", func(t *testing.T, s store.ChatPosts) {
		ctx := context.Background()
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := s.ClaimChatPost(ctx, store.ChatPost{Platform: "discord", Request: "r", Chat: "1", Posted: base})
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("%d claimers won", won.Load())
		}
	}},
}
