package workerapi

import (
	"sync"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/store"
)

// Output keeps what the run history keeps of a step's output: the first
// and last store.CronOutputCap bytes, whatever the step prints. A worker
// writes its step's output to it and reports String with the step. It
// is safe for concurrent use (stdout and stderr).
type Output struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // the last bytes once head is full
	total int64
}

func (w *Output) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += int64(len(p))
	rest := p
	if room := store.CronOutputCap - len(w.head); room > 0 {
		n := min(room, len(rest))
		w.head = append(w.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		w.tail = append(w.tail, rest...)
		if over := len(w.tail) - store.CronOutputCap; over > 0 {
			w.tail = append(w.tail[:0], w.tail[over:]...)
		}
	}
	return len(p), nil
}

// String is the output as the history keeps it: all of it if it fits
// store.CronOutputCap, else a head and a tail around
// store.TruncationMarker, as store.CapOutput makes it.
func (w *Output) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total <= int64(len(w.head)+len(w.tail)) {
		s, _ := store.CapOutput(string(w.head) + string(w.tail))
		return s
	}
	room := store.CronOutputCap - len(store.TruncationMarker(w.total))
	h := runeCut(w.head, room/2)
	t := w.tail[len(w.tail)-min(len(w.tail), room-h):]
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return string(w.head[:h]) + store.TruncationMarker(w.total-int64(h)-int64(len(t))) + string(t)
}

// runeCut moves n back to a rune start in b.
func runeCut(b []byte, n int) int {
	n = min(n, len(b))
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}
