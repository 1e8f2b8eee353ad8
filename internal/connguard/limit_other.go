//go:build !unix

package connguard

// DescriptorLimit is 1024 where there is no RLIMIT_NOFILE to read: Cap
// then allows 64 connections.
func DescriptorLimit() uint64 { return 1024 }
