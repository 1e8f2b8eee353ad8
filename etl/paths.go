package etl

import "path/filepath"

// PathResolver is implemented by component configurations that name files.
// The config loader calls ResolvePaths with the directory of the
// configuration file after decoding, so a relative path means the same file
// whatever the working directory of the process.
type PathResolver interface {
	ResolvePaths(dir string)
}

// FileWriter is implemented by sink configurations that append to a file.
// WritesFile returns that file's path (after ResolvePaths), so the config
// loader can refuse two writers of one file in a process.
type FileWriter interface {
	WritesFile() string
}

// resolvePath returns p joined to dir when p is relative and not empty.
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// ResolvePaths makes Path relative to dir.
func (c *FileSinkConfig) ResolvePaths(dir string) { c.Path = resolvePath(dir, c.Path) }

// WritesFile returns Path.
func (c *FileSinkConfig) WritesFile() string { return filepath.Clean(c.Path) }
