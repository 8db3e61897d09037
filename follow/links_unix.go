//go:build unix

package follow

import (
	"os"
	"syscall"
)

// links returns the number of names a file has; zero once deleted.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
