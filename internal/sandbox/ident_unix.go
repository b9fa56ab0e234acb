//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// statID is the device and inode of fi.
func statID(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // Dev is int32 on darwin
}
