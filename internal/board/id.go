package board

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	"sync"
	"time"
)

// crockford is Crockford's base-32 alphabet in lower case: no i, l, o
// or u, so an id read aloud or typed is hard to get wrong.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// IDs makes short ids that sort by creation time: 10 characters of
// milliseconds since the Unix epoch and 4 of a counter that starts at a
// random value in each millisecond and counts up within it, 14
// characters in all ("01jq3m5x7k4f2a"). Ids from one IDs never repeat
// and always increase, even when the clock steps back. The zero value
// is ready to use (crypto/rand, time.Now).
type IDs struct {
	// Rand seeds each millisecond's counter; nil means crypto/rand.
	Rand io.Reader
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	lastMS int64
	seq    uint32
}

// seqBits is the width of the counter; a new millisecond starts it in
// the lower half so that it has room to count.
const seqBits = 20

// New returns the next id.
func (g *IDs) New() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	ms := now().UnixMilli()
	switch {
	case ms > g.lastMS:
		g.lastMS, g.seq = ms, g.random()&(1<<(seqBits-1)-1)
	case g.seq+1 < 1<<seqBits:
		g.seq++ // same millisecond, or the clock stepped back
	default:
		g.lastMS++ // the counter ran out: borrow the next millisecond
		g.seq = g.random() & (1<<(seqBits-1) - 1)
	}
	var b [14]byte
	v := uint64(g.lastMS)
	for i := 9; i >= 0; i-- {
		b[i] = crockford[v&31]
		v >>= 5
	}
	s := g.seq
	for i := 13; i >= 10; i-- {
		b[i] = crockford[s&31]
		s >>= 5
	}
	return string(b[:])
}

func (g *IDs) random() uint32 {
	r := g.Rand
	if r == nil {
		r = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0 // the counter still makes the id unique within this IDs
	}
	return binary.BigEndian.Uint32(b[:])
}
