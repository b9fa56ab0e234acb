//go:build unix

package protect

import (
	"io/fs"
	"syscall"
)

// links is the number of hard links of a file (1 when unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
