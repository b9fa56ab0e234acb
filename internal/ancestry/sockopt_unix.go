//go:build linux || darwin

package ancestry

import "net"

// sockopt runs read on c's socket descriptor and returns its error, or
// the error of reaching the descriptor. What the kernel recorded about a
// peer (its credentials, a pidfd) is read with getsockopt on the raw
// descriptor, which net only lends out inside Control.
func sockopt(c *net.UnixConn, read func(fd int) error) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	if err := raw.Control(func(fd uintptr) { rerr = read(int(fd)) }); err != nil {
		return err
	}
	return rerr
}
