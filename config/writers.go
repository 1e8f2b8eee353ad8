package config

import (
	"github.com/agora-etl/agora/etl"
)

// oneWriterPerFile refuses two sinks or dead-letter queues of the file's
// pipelines that append to one file (after relative paths are resolved):
// their buffers would be written out independently, and each would take
// the other's last line for a torn tail to remove. It also refuses a path
// whose folder cannot be created (etl.FolderProblem): every run would fail
// to open it.
func (d *decoder) oneWriterPerFile(f *File) {
	first := map[string]path{}
	check := func(c *Component) {
		w, ok := c.Config.(etl.FileWriter)
		if !ok || w.WritesFile() == "" {
			return
		}
		file := w.WritesFile()
		at := c.at.child("path")
		if why := etl.FolderProblem(file); why != "" {
			d.atValue(at, "%s: %s", at, why)
		}
		prev, seen := first[file]
		if !seen {
			first[file] = at
			return
		}
		pos := d.ix.valuePos(prev)
		d.atValue(at, "%s: %s is also written by %s (%s:%d:%d); a file has one writer: give each sink and dead-letter queue a file of its own",
			at, file, prev, d.file, pos.line, pos.col)
	}
	for _, p := range f.Pipelines {
		for i := range p.Sinks {
			check(&p.Sinks[i])
		}
		if p.DLQ != nil {
			check(p.DLQ)
		}
	}
}
