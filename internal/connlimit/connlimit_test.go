package connlimit

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestCaps: a client past its cap, and any client past the total, is
// answered and closed at once; closing a connection frees its slot.
func TestCaps(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(raw, Options{Limits: Limits{MaxConns: 3, MaxConnsPerClient: 2}, Refuse: RefuseHTTP})
	defer l.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(ip byte) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, ip)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	refused := func(c net.Conn, what string) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: %v %v, want a 503", what, resp, err)
		}
		resp.Body.Close()
	}
	a1, a2 := dial(2), dial(2)
	s1, s2 := <-accepted, <-accepted
	refused(dial(2), "a third from one client")
	dial(3)
	<-accepted
	refused(dial(4), "past the total")
	if total, n := l.Open("127.0.0.2"); total != 3 || n != 2 {
		t.Fatalf("open %d, %d for the client; want 3 and 2", total, n)
	}
	s1.Close()
	s1.Close() // twice frees once
	a1.Close()
	if total, n := l.Open("127.0.0.2"); total != 2 || n != 1 {
		t.Fatalf("after a close: open %d, %d; want 2 and 1", total, n)
	}
	dial(2)
	if c := <-accepted; Unwrap(c) == c {
		t.Error("Unwrap did not reach the accepted connection")
	}
	_, _ = a2, s2
}
