package surface

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// MaxOutput is how much of a command's output a surface keeps.
const MaxOutput = 64 << 10

// Output is a bounded, concurrency-safe buffer for a command's output:
// Host.Shell writes stdout and stderr from their own goroutines. It
// keeps the first MaxOutput bytes.
type Output struct {
	mu        sync.Mutex
	b         []byte
	truncated bool
}

// Write keeps what fits of p and reports all of it written, so the
// command is never stopped by a full buffer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	room := MaxOutput - len(o.b)
	if len(p) > room {
		o.b = append(o.b, p[:max(room, 0)]...)
		o.truncated = true
	} else {
		o.b = append(o.b, p...)
	}
	return len(p), nil
}

// String is what was kept.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.b)
}

// Truncated reports whether more came than was kept.
func (o *Output) Truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.truncated
}

// Abbreviate keeps the head and the tail of a long text (a command's
// first lines and its exit status), keep bytes of each cut at rune
// boundaries, saying how much was cut between them. A text no longer
// than limit is kept whole.
func Abbreviate(s string, limit, keep int) string {
	if len(s) <= limit {
		return s
	}
	head, tail := keep, len(s)-keep
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + fmt.Sprintf("\n… %d bytes not shown …\n", tail-head) + s[tail:]
}
