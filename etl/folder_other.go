//go:build !unix

package etl

// writableDir cannot tell without trying on this system: the run's open
// reports a folder it may not write.
func writableDir(string) error { return nil }
