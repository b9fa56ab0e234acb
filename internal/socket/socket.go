// Package socket creates warden's private unix sockets (the admin socket,
// the worker socket): mode 0600 in a directory owned by this user and
// made 0700, a stale socket replaced, a live one refused; and the HTTP
// client of the admin socket, which tells "no host" from other errors.
package socket

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrInUse: another host is serving on the socket.
var ErrInUse = errors.New("socket in use: another warden host is running on this state directory")

// Listen creates a private socket at path. Its directory must be owned
// by this user and is made mode 0700 (created if missing), so the socket
// is never reachable by others, whatever the umask, even in the moment
// before it is chmod-ed to 0600. A stale socket left by a crashed host
// is replaced; a live one is ErrInUse.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		if live(path) {
			return nil, fmt.Errorf("listen on %s: %w", path, ErrInUse)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen on %s: remove stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Close removes the file; the host removes it on shutdown.
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// live reports whether something accepts connections on the socket.
func live(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// privateDir makes dir exist as a directory owned by this user with
// mode 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d)", dir, st.Uid, os.Getuid())
	}
	if info.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}
