// Package connlimit keeps slow or greedy clients from holding warden's
// servers: a listener that caps open connections in all and per client
// (remote IP for TCP, peer uid for a unix socket), refusing the excess
// at once rather than queueing it, and the timeouts every HTTP server
// of warden sets (Limits).
//
// A connection over a cap is answered (Refuse, e.g. an HTTP 503) and
// closed; Accept never blocks on a cap, so one client's pile of idle
// connections cannot stop others from being accepted, and the server's
// timeouts cut the idle ones loose.
package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/ancestry"
)

// Limits are a server's timeouts and connection caps. The zero value of
// a field means its default (Defaults).
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// the whole request with its body, WriteTimeout the response;
	// IdleTimeout how long a keep-alive connection may wait for its
	// next request. A handler that legitimately reads or writes longer
	// (an event stream, a command's output) lifts its own deadlines with
	// http.ResponseController.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// MaxConns caps open connections in all; MaxConnsPerClient those of
	// one client (remote IP, or peer uid).
	MaxConns          int
	MaxConnsPerClient int
}

// Defaults are the limits warden's servers use unless told otherwise.
var Defaults = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxConns:          1024,
	MaxConnsPerClient: 256,
}

// WithDefaults fills l's zero (or negative) fields from Defaults.
func (l Limits) WithDefaults() Limits {
	d := Defaults
	return Limits{
		ReadHeaderTimeout: positiveOr(l.ReadHeaderTimeout, d.ReadHeaderTimeout),
		ReadTimeout:       positiveOr(l.ReadTimeout, d.ReadTimeout),
		WriteTimeout:      positiveOr(l.WriteTimeout, d.WriteTimeout),
		IdleTimeout:       positiveOr(l.IdleTimeout, d.IdleTimeout),
		MaxConns:          positiveOr(l.MaxConns, d.MaxConns),
		MaxConnsPerClient: positiveOr(l.MaxConnsPerClient, d.MaxConnsPerClient),
	}
}

// positiveOr returns v if it is set (positive), else def.
func positiveOr[T time.Duration | int](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Apply sets srv's timeouts from l (with defaults).
func (l Limits) Apply(srv *http.Server) {
	l = l.WithDefaults()
	srv.ReadHeaderTimeout = l.ReadHeaderTimeout
	srv.ReadTimeout = l.ReadTimeout
	srv.WriteTimeout = l.WriteTimeout
	srv.IdleTimeout = l.IdleTimeout
}

// KeyFunc names the client of a connection.
type KeyFunc func(net.Conn) (string, error)

// RemoteIP is the client of a TCP connection: its remote address
// without the port.
func RemoteIP(c net.Conn) (string, error) {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return "", fmt.Errorf("remote address %q: %w", c.RemoteAddr(), err)
	}
	return host, nil
}

// PeerUID is the client of a unix socket connection: the uid the kernel
// reports for the peer.
func PeerUID(c net.Conn) (string, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return "", errors.New("not a unix socket connection")
	}
	cr, err := ancestry.PeerCred(uc)
	if err != nil {
		return "", err
	}
	return "uid " + strconv.Itoa(cr.UID), nil
}

// RefuseHTTP answers a refused connection with a 503 and closes it.
func RefuseHTTP(c net.Conn, reason string) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	body := reason + "\n"
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 5\r\n\r\n%s", len(body), body)
}

// Options configure a Listener.
type Options struct {
	Limits Limits
	// Key names a connection's client; nil means RemoteIP. A connection
	// whose client cannot be named is refused.
	Key KeyFunc
	// Refuse, if set, answers a refused connection before it is closed.
	Refuse func(c net.Conn, reason string)
	Logger *slog.Logger
}

// Listener is a net.Listener with connection caps.
type Listener struct {
	net.Listener
	o   Options
	log *slog.Logger

	mu     sync.Mutex
	total  int
	per    map[string]int
	warned time.Time
}

// New wraps ln.
func New(ln net.Listener, o Options) *Listener {
	o.Limits = o.Limits.WithDefaults()
	if o.Key == nil {
		o.Key = RemoteIP
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, o: o, log: o.Logger.With("component", "connlimit", "addr", ln.Addr().String()), per: map[string]int{}}
}

// Accept returns the next connection within the caps; connections over
// a cap are refused and closed in passing.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, err := l.o.Key(c)
		if err != nil {
			l.refuse(c, "", "cannot tell who connected: "+err.Error())
			continue
		}
		if reason := l.admit(key); reason != "" {
			l.refuse(c, key, reason)
			continue
		}
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

// admit counts a new connection of key, or says why not.
func (l *Listener) admit(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.o.Limits.MaxConns:
		return fmt.Sprintf("too many connections (at most %d)", l.o.Limits.MaxConns)
	case l.per[key] >= l.o.Limits.MaxConnsPerClient:
		return fmt.Sprintf("too many connections from %s (at most %d)", key, l.o.Limits.MaxConnsPerClient)
	}
	l.total++
	l.per[key]++
	return ""
}

func (l *Listener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.per[key]--; l.per[key] <= 0 {
		delete(l.per, key)
	}
}

// refuse answers and closes c, logging at most once a second.
func (l *Listener) refuse(c net.Conn, key, reason string) {
	if l.o.Refuse != nil {
		l.o.Refuse(c, reason)
	}
	c.Close()
	l.mu.Lock()
	warn := time.Since(l.warned) > time.Second
	if warn {
		l.warned = time.Now()
	}
	l.mu.Unlock()
	if warn {
		l.log.Warn("refused connection", "client", key, "reason", reason)
	}
}

// Open reports how many connections are open, in all and for key.
func (l *Listener) Open(key string) (total, forKey int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.per[key]
}

// conn releases its slot once, when closed.
type conn struct {
	net.Conn
	l    *Listener
	key  string
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// NetConn returns the connection the listener accepted (as tls.Conn
// does), so callers can reach its concrete type (a *net.UnixConn's peer
// credentials).
func (c *conn) NetConn() net.Conn { return c.Conn }

// Unwrap returns the accepted connection under c, or c itself.
func Unwrap(c net.Conn) net.Conn {
	for {
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		c = w.NetConn()
	}
}
