package workerapi

import (
	"net"

	"github.com/wardenhq/warden/internal/socket"
)

// ErrInUse: something already serves the socket.
var ErrInUse = socket.ErrInUse

// Listen creates the worker socket at path (see socket.Listen).
func Listen(path string) (net.Listener, error) { return socket.Listen(path) }
