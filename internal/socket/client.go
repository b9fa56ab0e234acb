package socket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// ErrNotRunning: no host serves the socket.
var ErrNotRunning = errors.New("warden is not running")

// NotRunningError says which socket nobody answered on.
type NotRunningError struct {
	Socket string
	// Stale is true when the socket file exists but nothing listens.
	Stale bool
}

func (e *NotRunningError) Error() string {
	if e.Stale {
		return fmt.Sprintf("warden is not running (nothing listens on %s); start it with `warden serve`", e.Socket)
	}
	return fmt.Sprintf("warden is not running (no socket at %s); start it with `warden serve`", e.Socket)
}

// Is makes errors.Is(err, ErrNotRunning) true.
func (e *NotRunningError) Is(target error) bool { return target == ErrNotRunning }

// HTTPClient returns an HTTP client whose every request goes to the
// socket at path, whatever host its URL names: the admin API's clients
// (the CLI's and the hook binary's) speak HTTP over the private socket,
// not over the network.
func HTTPClient(path string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}
	return &http.Client{Transport: tr}
}

// NotRunning returns a *NotRunningError when err, of a request to the
// socket at path, says no host serves it (no socket file, or a stale one
// nothing listens on), and nil for any other error, which the caller
// reports as its own.
func NotRunning(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return &NotRunningError{Socket: path}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &NotRunningError{Socket: path, Stale: true}
	}
	return nil
}
