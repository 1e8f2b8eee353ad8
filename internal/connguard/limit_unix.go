//go:build unix

package connguard

import "syscall"

// DescriptorLimit returns the soft RLIMIT_NOFILE. Go raises the soft limit
// to the hard one when the process starts, so this is the most descriptors
// the process can hold; an error is taken as the common default, 1024.
func DescriptorLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 1024
	}
	return rl.Cur
}
