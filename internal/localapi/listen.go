package localapi

import (
	"net"

	"github.com/wardenhq/warden/internal/socket"
)

// ErrInUse: another host is serving on the socket.
var ErrInUse = socket.ErrInUse

// Listen creates the admin socket at path (see socket.Listen).
func Listen(path string) (net.Listener, error) { return socket.Listen(path) }
