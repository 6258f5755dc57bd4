//go:build !unix

// Package dirlock tells the directories of running processes from those
// that killed processes left behind. Where there is no flock it does
// nothing: directories of killed processes are not found.
package dirlock

import "os"

// Name is the lock file's name where locks exist.
const Name = ".lock"

// Lock does nothing here.
func Lock(string) (*os.File, error) { return nil, nil }

// Sweep removes nothing here.
func Sweep(string) ([]string, error) { return nil, nil }
