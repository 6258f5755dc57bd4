//go:build unix

// Package dirlock tells the directories of running processes from those
// that killed processes left behind, by a lock the system drops when a
// process ends.
package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// Name is the file in a directory that its owner holds an exclusive lock
// on while it runs; the system releases the lock when the process ends,
// however it ends.
const Name = ".lock"

// Lock takes the lock of the new directory dir; closing the file releases
// it. The lock file gets its name only once locked, so that
// another worker never finds it unlocked.
func Lock(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, Name+".new")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, Name)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// stale says whether the directory dir was left by a process that ended
// without removing it (killed): its lock can be taken. Directories without
// a lock file are not judged.
func stale(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, Name), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// Sweep removes the directories matching pattern (filepath.Glob) that
// processes killed before they could remove them left behind: those whose
// lock nobody holds. It returns what it removed.
func Sweep(pattern string) ([]string, error) {
	dirs, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, d := range dirs {
		if !stale(d) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, d)
	}
	return removed, errors.Join(errs...)
}
