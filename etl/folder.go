package etl

import (
	"fmt"
	"os"
	"path/filepath"
)

// FolderProblem says why the folder of the file at path cannot be created
// or written to, or "" when it exists and is writable or can be made:
// `agora check` reports it at the sink's path, since the file sink creates
// missing folders when the run opens it and a path under a regular file, or
// under a folder this process may not write, would fail every run. It
// looks only, creating nothing.
func FolderProblem(path string) string {
	dir := filepath.Dir(filepath.Clean(path))
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Sprintf("the folder %s cannot be created: %s is a file, not a folder", dir, d)
			}
			if err := writableDir(d); err != nil {
				if d == dir {
					return fmt.Sprintf("the folder %s cannot be written to: %v", dir, err)
				}
				return fmt.Sprintf("the folder %s cannot be created in %s: %v", dir, d, err)
			}
			return ""
		}
		// Missing, or under a file (ENOTDIR): look further up.
		if parent := filepath.Dir(d); parent == d {
			return ""
		}
	}
}
