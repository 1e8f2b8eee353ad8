//go:build unix

package etl

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f and returns its release.
// Appends and the torn-tail check take it, so a sink opening a file never
// mistakes another writer's append in progress for a line a crash cut
// short. The kernel drops the lock of a process that dies.
func lockFile(f *os.File) (func(), error) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == nil {
			break
		}
		if err != syscall.EINTR {
			return nil, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
