//go:build unix

package worker

import (
	"os"
	"path/filepath"
	"syscall"
)

// dirLockName is the file in a worker's directory that the worker holds an
// exclusive lock on while it runs; the system releases the lock when the
// process ends, however it ends.
const dirLockName = ".lock"

// lockDir takes the lock of the worker directory dir; closing the file
// releases it. The lock file gets its name only once locked, so that
// another worker never finds it unlocked.
func lockDir(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, dirLockName+".new")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dirLockName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// staleDir says whether the worker directory dir was left by a process
// that ended without removing it (killed): its lock can be taken.
// Directories without a lock file are not judged.
func staleDir(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, dirLockName), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
