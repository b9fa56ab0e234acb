package localapi

import (
	"net"

	"github.com/wardenhq/warden/internal/ancestry"
)

// peerCred reads the connecting process's credentials as the kernel
// recorded them (SO_PEERCRED, via ancestry, the one place that reads
// them; off Linux it fails, and every connection is refused).
func peerCred(c *net.UnixConn) (Peer, error) {
	cr, err := ancestry.PeerCred(c)
	if err != nil {
		return Peer{}, err
	}
	return Peer{UID: cr.UID, GID: cr.GID, PID: cr.PID}, nil
}
