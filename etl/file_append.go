package etl

import "os"

// lockedAppender writes to a file opened for appending, each write under
// the file's lock (see lockFile), so that dropTornTail in another sink
// sees a write either whole or not at all.
//
// It also remembers where its writes since the last flush began, so that
// a run that fails can take them back (undo): lines the buffer had to
// write out before the batch was acknowledged would otherwise stay in the
// file, and the batch comes again.
type lockedAppender struct {
	f       *os.File
	pending bool  // something was written since the last flush
	from    int64 // where the first unflushed write began; -1: unknown
	end     int64 // where our last write ended
}

func (a *lockedAppender) Write(p []byte) (int, error) {
	unlock, err := lockFile(a.f)
	if err != nil {
		return 0, err
	}
	defer unlock()
	var size int64 = -1
	if st, err := a.f.Stat(); err == nil {
		size = st.Size()
	}
	switch {
	case !a.pending:
		a.pending, a.from = true, size
	case size != a.end:
		a.from = -1 // another writer appended in between: not ours to cut
	}
	n, err := a.f.Write(p)
	if size >= 0 {
		a.end = size + int64(n)
	}
	return n, err
}

// flushed says everything written so far is durable.
func (a *lockedAppender) flushed() { a.pending = false }

// undo truncates the file back to where the writes since the last flush
// began, when nothing but those writes came after. It reports whether the
// file is as it was at the last flush.
func (a *lockedAppender) undo() bool {
	if !a.pending {
		return true
	}
	if a.from < 0 {
		return false
	}
	unlock, err := lockFile(a.f)
	if err != nil {
		return false
	}
	defer unlock()
	st, err := a.f.Stat()
	if err != nil || st.Size() != a.end {
		return false
	}
	if err := a.f.Truncate(a.from); err != nil {
		return false
	}
	a.pending = false
	return true
}
