package distributed

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes a worker process die with its parent.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
