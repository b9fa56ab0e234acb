package workerapi

import (
	"net"

	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/socket"
)

// ErrInUse: something already serves the socket.
var ErrInUse = socket.ErrInUse

// Listen creates the worker socket at path (see socket.Listen), with
// connection caps in all and per peer uid (connlimit.Defaults): a
// connection over a cap is closed at once. A connection that never
// says hello is cut after Options.HelloTimeout.
func Listen(path string) (net.Listener, error) {
	ln, err := socket.Listen(path)
	if err != nil {
		return nil, err
	}
	return connlimit.New(ln, connlimit.Options{Key: connlimit.PeerUID}), nil
}
