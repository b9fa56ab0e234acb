package workerapi

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrInUse: something already serves the socket.
var ErrInUse = errors.New("worker socket in use: another warden host is running on this state directory")

// Listen creates the worker socket at path, mode 0600, in a directory
// owned by this user that is made mode 0700 (created if missing), so no
// other user can reach it even before the chmod. A stale socket left by
// a crashed host is replaced; a live one is ErrInUse.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !info.IsDir() || (ok && int(st.Uid) != os.Getuid()) {
		return nil, fmt.Errorf("listen on %s: %s is not a directory owned by this user", path, dir)
	}
	if info.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("listen on %s: make %s private: %w", path, dir, err)
		}
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
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
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}
