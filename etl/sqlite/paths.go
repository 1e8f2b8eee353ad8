package sqlite

import (
	"path/filepath"
	"strings"
)

// resolvePath returns p joined to dir when p is a relative file path: not
// empty, not absolute, not ":memory:" and not a "file:" URI.
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || p == ":memory:" || strings.HasPrefix(p, "file:") {
		return p
	}
	return filepath.Join(dir, p)
}

// ResolvePaths makes a relative Path relative to dir, the config file's
// directory (etl.PathResolver).
func (c *SinkConfig) ResolvePaths(dir string) { c.Path = resolvePath(dir, c.Path) }

// ResolvePaths makes a relative Path relative to dir, the config file's
// directory (etl.PathResolver).
func (c *SourceConfig) ResolvePaths(dir string) { c.Path = resolvePath(dir, c.Path) }
