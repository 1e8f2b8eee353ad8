package cli

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the worker child exit when agora itself is killed, so
// a SIGKILLed `agora worker --module` leaves no orphan worker behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
