package diagnostics

import (
	"io"
	"os"
)

// isTerminal reports whether w looks like a terminal: an *os.File that is
// a character device. It errs on the side of "no" for anything else.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}
