package cron

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/store"
)

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
	}{
		{"empty", nil},
		{"small", []string{"hello\n", "world\n"}},
		{"exactly the cap", []string{strings.Repeat("a", store.CronOutputCap)}},
		{"one byte over", []string{strings.Repeat("a", store.CronOutputCap), "b"}},
		{"far over in small writes", repeat("line of output\n", 20000)},
		{"runes across every cut", []string{strings.Repeat("é€😀", 20000)}},
		{"runes in one-byte writes", splitBytes(strings.Repeat("😀", 2*store.CronOutputCap/4+3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c capture
			whole := strings.Join(tc.writes, "")
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := c.String()
			if len(whole) <= store.CronOutputCap {
				if got != whole {
					t.Errorf("output changed: %d bytes, want %d", len(got), len(whole))
				}
				return
			}
			head, tail, ok := strings.Cut(got, "\n[warden: ")
			if !ok || len(got) > store.CronOutputCap || !utf8.ValidString(got) {
				t.Fatalf("%d bytes, marker %v, valid %v", len(got), ok, utf8.ValidString(got))
			}
			tail = tail[strings.Index(tail, "omitted]\n")+len("omitted]\n"):]
			if !strings.HasPrefix(whole, head) || !strings.HasSuffix(whole, tail) {
				t.Error("head or tail is not the output's")
			}
			omitted := len(whole) - len(head) - len(tail)
			if !strings.Contains(got, store.TruncationMarker(int64(omitted))) {
				t.Errorf("marker does not say %d bytes were omitted", omitted)
			}
			if len(got) < store.CronOutputCap-64 {
				t.Errorf("only %d bytes kept", len(got))
			}
		})
	}
}

func TestCaptureConcurrentWrites(t *testing.T) {
	var c capture
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				c.Write([]byte("0123456789abcdef"))
			}
		})
	}
	wg.Wait()
	if c.total != 8*1000*16 || len(c.String()) > store.CronOutputCap {
		t.Errorf("total %d, output %d bytes", c.total, len(c.String()))
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func splitBytes(s string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i : i+1]
	}
	return out
}
