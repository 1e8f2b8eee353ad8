package etl

import "io"

// lineBufferSize is how many bytes of whole lines a lineWriter gathers
// before it writes them out.
const lineBufferSize = 64 << 10

// lineWriter buffers whole lines and hands them to its writer only at line
// boundaries, each time in one Write: a line is never split across two
// writes, whatever its length. A file opened with O_APPEND then receives
// every record as a whole, so two writers appending to one file (which a
// deployment should avoid, see the file sink) interleave lines, never
// pieces of lines, and a crash leaves at most one torn line at the end.
//
// bufio.Writer would write a full buffer out in the middle of a line.
type lineWriter struct {
	w    io.Writer
	buf  []byte
	size int
}

func newLineWriter(w io.Writer, size int) *lineWriter {
	return &lineWriter{w: w, buf: make([]byte, 0, size), size: size}
}

// tail returns the buffer for appending one line; pass its length before
// the append to commit.
func (l *lineWriter) tail() []byte { return l.buf }

// commit takes b, the buffer from tail with one or more whole lines
// appended from offset start on. When the buffer is over its size, the
// lines before start go out in one write and, when the new line is itself
// larger than the buffer, it goes out alone in a second one.
func (l *lineWriter) commit(b []byte, start int) error {
	l.buf = b
	if len(l.buf) <= l.size {
		return nil
	}
	if start > 0 {
		if _, err := l.w.Write(l.buf[:start]); err != nil {
			l.buf = l.buf[:start] // the new line is not written
			return err
		}
		n := copy(l.buf, l.buf[start:])
		l.buf = l.buf[:n]
	}
	if len(l.buf) > l.size {
		_, err := l.w.Write(l.buf)
		l.buf = l.buf[:0]
		if cap(l.buf) > 4*l.size {
			// One huge record should not keep a huge buffer.
			l.buf = make([]byte, 0, l.size)
		}
		return err
	}
	return nil
}

// Flush writes out the buffered lines in one write.
func (l *lineWriter) Flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// Write appends p, which must end at a line boundary, as one commit: the
// target of encoders that write a whole line per call.
func (l *lineWriter) Write(p []byte) (int, error) {
	start := len(l.buf)
	if err := l.commit(append(l.buf, p...), start); err != nil {
		return 0, err
	}
	return len(p), nil
}
