//go:build unix

package etl

import "syscall"

// writableDir reports why this process may not create entries in dir.
func writableDir(dir string) error {
	const wx = 0x2 | 0x1 // W_OK | X_OK
	return syscall.Access(dir, wx)
}
