package host

import (
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/policy"
)

// kanbanChannel is the answer channel a kanban run's owner carries for
// one worker request: this host's web console while
// approvals.kanban_mode is ask, none otherwise. The console lists every
// pending request of the store, so on a shared store the question shows
// on every host's console and is answered on any of them. Without a
// console there is no channel, and the gate denies at once: a question
// is only parked where a live answer channel exists (invariant 9).
func (h *host) kanbanChannel() owner.AnswerChannel {
	if h.console == nil || h.gate == nil || h.gate.Policy().KanbanMode != policy.UnattendedAsk {
		return nil
	}
	return h.console
}

// kanbanAskLine is the banner's line about kanban_mode ask, "" when it
// is not set. (warden serve always serves the console; a host without
// one has no kanbanChannel, and its kanban steps are denied at once.)
func kanbanAskLine(mode policy.UnattendedMode, timeout time.Duration, console string) string {
	if mode != policy.UnattendedAsk {
		return ""
	}
	return fmt.Sprintf("kanban_mode ask: dangerous kanban steps wait up to %s for an answer on the console (%spending, or any host's sharing the store); no answer is a deny", timeout, console)
}
