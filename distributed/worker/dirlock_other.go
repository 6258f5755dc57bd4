//go:build !unix

package worker

import "os"

// lockDir does nothing where there is no flock: directories of killed
// workers are then not found and removed by later ones.
func lockDir(string) (*os.File, error) { return nil, nil }

func staleDir(string) bool { return false }
