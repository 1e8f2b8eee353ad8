//go:build !unix

package runtime

// descriptorLimit is 1024 where there is no RLIMIT_NOFILE to read: the
// health server then holds at most 64 connections.
func descriptorLimit() uint64 { return 1024 }
