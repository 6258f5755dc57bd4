package shuffle

import (
	"errors"
	"os"
	"syscall"
)

// Flags of fallocate(2).
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
)

// punchHole frees the disk blocks of a range of f (reads of it return
// zeros). A file system that cannot is no error: the space is freed when
// the file is removed.
func punchHole(f *os.File, offset, length int64) error {
	if length <= 0 {
		return nil
	}
	err := syscall.Fallocate(int(f.Fd()), fallocKeepSize|fallocPunchHole, offset, length)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "punch hole", Path: f.Name(), Err: err}
	}
	return nil
}
