//go:build linux || darwin

package ancestry

import "net"

// sockopt runs read on c's socket descriptor. What the kernel recorded
// about a peer (its credentials, a pidfd) is read with getsockopt on the
// raw descriptor, which net only lends out inside Control.
func sockopt(c *net.UnixConn, read func(fd int)) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	return raw.Control(func(fd uintptr) { read(int(fd)) })
}
