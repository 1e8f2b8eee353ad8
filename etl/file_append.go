package etl

import "os"

// lockedAppender writes to a file opened for appending, each write under
// the file's lock (see lockFile), so that dropTornTail in another sink
// sees a write either whole or not at all.
type lockedAppender struct{ f *os.File }

func (a lockedAppender) Write(p []byte) (int, error) {
	unlock, err := lockFile(a.f)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return a.f.Write(p)
}
