//go:build !linux

package distributed

import "os/exec"

// setProcAttr does nothing here: the worker notices that its standard
// input closed when the parent ends.
func setProcAttr(cmd *exec.Cmd) {}
