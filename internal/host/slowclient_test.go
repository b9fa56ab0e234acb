package host

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/localapi"
)

// waitClosed reads c until the server closes it and fails t if that
// takes longer than limit (a bound far above the server's timeout, so
// nothing here races it).
func waitClosed(t *testing.T, c net.Conn, limit time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("the server held the connection for %v", limit)
	}
}

// drip writes msg one byte per interval until the server closes the
// connection; it returns how many bytes it got to send.
func drip(c net.Conn, msg string, interval time.Duration) <-chan int {
	sent := make(chan int, 1)
	go func() {
		n := 0
		for ; n < len(msg); n++ {
			if _, err := c.Write([]byte{msg[n]}); err != nil {
				break
			}
			time.Sleep(interval)
		}
		sent <- n
	}()
	return sent
}

// TestSlowClients: idle connections and connections that send a byte at
// a time are cut by the console and the admin socket (timeouts set
// short here through Config.Limits), and the host keeps serving.
func TestSlowClients(t *testing.T) {
	cfg := newConfig(t)
	cfg.Limits = connlimit.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: time.Second, IdleTimeout: 300 * time.Millisecond}
	th := startHost(t, cfg)
	web := strings.TrimSuffix(strings.TrimPrefix(th.info.ConsoleURL, "http://"), "/")
	sock := filepath.Join(cfg.StateDir, localapi.SocketName)
	// A slow header would take 40 s at one byte per 100 ms; the server
	// gives it 300 ms.
	slowHeader := "GET /login HTTP/1.1\r\nHost: " + web + "\r\nX-Pad: " + strings.Repeat("a", 360) + "\r\n\r\n"
	const limit = 20 * time.Second

	for _, tc := range []struct{ network, addr string }{{"tcp", web}, {"unix", sock}} {
		t.Run(tc.network+"/idle", func(t *testing.T) {
			c, err := net.Dial(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			waitClosed(t, c, limit)
		})
		t.Run(tc.network+"/one byte at a time", func(t *testing.T) {
			c, err := net.Dial(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sent := drip(c, slowHeader, 100*time.Millisecond)
			waitClosed(t, c, limit)
			c.Close()
			if n := <-sent; n >= len(slowHeader) {
				t.Fatalf("the server waited for the whole slow header (%d bytes)", n)
			}
		})
		t.Run(tc.network+"/idle after a request", func(t *testing.T) {
			c, err := net.Dial(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			host := web
			if tc.network == "unix" {
				host = localapi.Host
			}
			fmt.Fprintf(c, "GET /nope HTTP/1.1\r\nHost: %s\r\n\r\n", host)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			waitClosed(t, c, limit) // keep-alive, then idle: cut
		})
	}

	// A body sent a byte at a time (the admin socket's exec, whose body
	// is JSON) is cut by the read timeout: nothing runs.
	t.Run("unix/slow body", func(t *testing.T) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		body := `{"session":"slow","command":"touch ` + filepath.Join(cfg.ScratchDir, "slow") + `"}` + strings.Repeat(" ", 200)
		fmt.Fprintf(c, "POST /v1/exec HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", localapi.Host, len(body))
		sent := drip(c, body, 100*time.Millisecond)
		waitClosed(t, c, limit)
		c.Close()
		if n := <-sent; n >= len(body) {
			t.Fatalf("the server waited for the whole slow body (%d bytes)", n)
		}
		if _, err := os.Stat(filepath.Join(cfg.ScratchDir, "slow")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the slow request ran: %v", err)
		}
	})

	// Meanwhile the host serves others.
	if _, err := th.client.Approvals(t.Context()); err != nil {
		t.Fatalf("admin socket after the slow clients: %v", err)
	}
	resp, err := http.Get(th.info.ConsoleURL + "login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("console after the slow clients: %d", resp.StatusCode)
	}
}

// TestManyIdleConnections: with hundreds of idle connections held open
// (timeouts long here, so none is cut while the test runs), one client
// past its cap is refused at once with a 503, and a normal request from
// another client succeeds.
func TestManyIdleConnections(t *testing.T) {
	const perClient, clients = 64, 9 // 576 idle connections
	cfg := newConfig(t)
	cfg.Limits = connlimit.Limits{ReadHeaderTimeout: 5 * time.Minute, IdleTimeout: 5 * time.Minute, MaxConnsPerClient: perClient, MaxConns: 4096}
	th := startHost(t, cfg)
	web := strings.TrimSuffix(strings.TrimPrefix(th.info.ConsoleURL, "http://"), "/")
	lim := th.webLn.(*connlimit.Listener)

	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for i := range clients {
		ip := net.IPv4(127, 0, 0, byte(2+i))
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
		for range perClient {
			c, err := d.Dial("tcp", web)
			if err != nil {
				t.Fatalf("dial from %v: %v", ip, err)
			}
			held = append(held, c)
		}
		// The server has accepted them all (Accept runs ahead of the
		// dials only so far; wait until it has counted them).
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, n := lim.Open(ip.String()); n == perClient {
				break
			}
			if time.Now().After(deadline) {
				_, n := lim.Open(ip.String())
				t.Fatalf("%v: %d connections held, want %d", ip, n, perClient)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if total, _ := lim.Open(""); total < perClient*clients {
		t.Fatalf("%d connections held, want at least %d", total, perClient*clients)
	}

	// One more from a client at its cap: a 503 at once, and closed.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	c, err := d.Dial("tcp", web)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("over the cap: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("over the cap: %d, want 503", resp.StatusCode)
	}

	// Another client is served.
	get, err := http.Get(th.info.ConsoleURL + "login")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("a normal request with %d idle connections held: %d", len(held), get.StatusCode)
	}
	if _, err := th.client.Approvals(t.Context()); err != nil {
		t.Fatalf("admin socket: %v", err)
	}
}
