package shuffle

import "syscall"

// allocated returns the bytes of disk a file takes.
func allocated(path string) (int64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Blocks * 512, true
}
