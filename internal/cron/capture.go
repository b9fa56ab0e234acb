package cron

import (
	"sync"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/store"
)

// capture keeps a step's output within store.CronOutputCap while the
// command runs: the first half and a ring of the last half, so memory
// stays bounded however much a command prints. It is safe for
// concurrent writes (stdout and stderr).
type capture struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // ring buffer once full
	pos   int    // next write position in tail when full
	full  bool
	total int64
}

const half = store.CronOutputCap / 2

// Write implements io.Writer; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if !c.full {
			k := min(half-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			if len(c.tail) == half {
				c.full, c.pos = true, 0
			}
			continue
		}
		k := min(half-c.pos, len(p))
		copy(c.tail[c.pos:], p[:k])
		p = p[k:]
		c.pos = (c.pos + k) % half
	}
	return n, nil
}

// String returns the output: whole when it fits store.CronOutputCap,
// else its head and tail around store.TruncationMarker, cut on UTF-8
// boundaries, in at most store.CronOutputCap bytes.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total <= store.CronOutputCap {
		// Nothing dropped (the ring has not wrapped).
		return string(c.head) + string(c.tail)
	}
	tail := append(append(make([]byte, 0, half), c.tail[c.pos:]...), c.tail[:c.pos]...)
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	// Drop a rune the head's end cut in two.
	head := c.head
	if i := lastRuneStart(head); !utf8.FullRune(head[i:]) {
		dropped += int64(len(head) - i)
		head = head[:i]
	}
	// Make room for the marker (at its widest) out of the tail, and
	// start the tail on a rune.
	skip := max(0, len(head)+len(store.TruncationMarker(c.total))+len(tail)-store.CronOutputCap)
	for skip < len(tail) && !utf8.RuneStart(tail[skip]) {
		skip++
	}
	dropped += int64(skip)
	return string(head) + store.TruncationMarker(dropped) + string(tail[skip:])
}

// lastRuneStart is the index where b's last rune starts.
func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && i > len(b)-utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}
