package etl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// FileSinkConfig configures the "file" sink.
type FileSinkConfig struct {
	// Path is the file records are appended to; it is created when missing.
	Path string `toml:"path"`
	// Format is "jsonl" or "csv"; empty means from the extension (.jsonl,
	// .ndjson, .json: jsonl; .csv: csv).
	Format string `toml:"format"`
}

// Validate checks the path and the format.
func (c FileSinkConfig) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, FieldErrorf("path", "is empty; name the file to append to"))
	} else if c.Format == "" {
		if _, err := formatOf("", c.Path); err != nil {
			errs = append(errs, FieldErrorf("format", "%w", err))
		}
	}
	if err := checkFormat(c.Format); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FileSink appends records to a file: JSON lines, or CSV rows. Flush writes
// out its buffer and fsyncs the file, so what was flushed survives a crash;
// the pipeline flushes before every acknowledgement and before a run
// succeeds. A process killed while writing can leave a last line cut short;
// that line was never flushed, so its batch was never acknowledged and will
// come again: the sink removes such a torn tail when it opens the file, so
// the next record never lands on the end of a broken line.
//
// Records reach the file as whole lines: the buffer is written out only at
// line boundaries, each piece in one write to a file opened for appending,
// and a record larger than the buffer goes out alone in one write. Still,
// a file has one writer: `agora check` refuses two file sinks (or a sink
// and a dead-letter queue) naming one path in a process, and replicas on
// one host must each write a file of their own (a path with the worker id
// or host in it, set through ${VAR}). Where writers do share a file, each
// append and the torn-tail check hold the file's advisory lock (flock on
// Unix), so no sink takes another's append in progress for a torn line;
// the order of their lines is whatever the appends make it, and on a
// network file system without flock the rule is the only protection.
//
// CSV columns are the file's header row when the file already has one,
// otherwise the sorted field names of the first record written, which then
// become the header. A record with a field that is not a column is rejected
// (to the dead-letter queue); a missing field is an empty cell.
type FileSink struct {
	path   string
	format string

	f      *os.File
	app    *lockedAppender
	jsonl  *jsonlWriter
	lines  *lineWriter  // csv: whole rows, to the file
	row    bytes.Buffer // csv: the row being encoded
	csv    *csv.Writer  // csv: writes to row
	header []string
	column map[string]int
	cells  []string
}

// NewFileSink returns a file sink; the file is opened by Open, which the
// pipeline calls before a run reads anything, or else at the first Write.
func NewFileSink(cfg FileSinkConfig) (*FileSink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	format, _ := formatOf(cfg.Format, cfg.Path)
	return &FileSink{path: cfg.Path, format: format}, nil
}

// Name is "file(PATH)".
func (s *FileSink) Name() string { return "file(" + s.path + ")" }

// Type is "file".
func (s *FileSink) Type() string { return "file" }

// Open creates the file's missing parent folders and opens the file
// (creating it when missing), so a path that cannot be written fails the
// run before anything was read; the error names the path.
func (s *FileSink) Open(ctx context.Context) error {
	if s.f != nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.open()
}

// Write appends records to the file's buffer. A context that ended (the
// run's timeout) writes nothing.
func (s *FileSink) Write(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etl: %s: not writing: %w", s.path, err)
	}
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	if s.jsonl != nil {
		if err := s.jsonl.write(records); err != nil {
			var rej *RejectedError
			if errors.As(err, &rej) {
				return err
			}
			return fmt.Errorf("etl: %s: %w", s.path, err)
		}
		return nil
	}
	return s.writeCSV(records)
}

func (s *FileSink) open() error {
	if err := makeParents(s.path); err != nil {
		return fmt.Errorf("etl: file sink: %w", err)
	}
	_, statErr := os.Stat(s.path)
	created := errors.Is(statErr, os.ErrNotExist)
	if !created {
		if err := dropTornTail(s.path); err != nil {
			return fmt.Errorf("etl: file sink: %w", err)
		}
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("etl: file sink: %w", err)
	}
	if created {
		// The new file's directory entry must survive a crash too.
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			f.Close()
			return fmt.Errorf("etl: file sink: %w", err)
		}
	}
	s.app = &lockedAppender{f: f}
	if s.format == FormatJSONL {
		s.f, s.jsonl = f, newJSONLWriter(s.app)
		return nil
	}
	header, err := readCSVHeader(s.path)
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.lines = f, newLineWriter(s.app, lineBufferSize)
	s.csv = csv.NewWriter(&s.row)
	if header != nil {
		s.setHeader(header)
	}
	return nil
}

func (s *FileSink) setHeader(header []string) {
	s.header = header
	s.column = make(map[string]int, len(header))
	for i, h := range header {
		s.column[h] = i
	}
	s.cells = make([]string, len(header))
}

func (s *FileSink) writeCSV(records []Record) error {
	var rejections []Rejection
	for i, rec := range records {
		if s.header == nil {
			keys := make([]string, 0, len(rec))
			for k := range rec {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			s.setHeader(keys)
			if err := s.writeRow(keys); err != nil {
				return err
			}
		}
		if err := s.csvRow(rec); err != nil {
			rejections = append(rejections, Rejection{Index: i, Err: err})
			continue
		}
		if err := s.writeRow(s.cells); err != nil {
			return err
		}
	}
	if rejections != nil {
		return &RejectedError{Rejections: rejections}
	}
	return nil
}

// writeRow encodes one CSV row (a value may span lines, quoted) and hands
// it to the line writer whole.
func (s *FileSink) writeRow(cells []string) error {
	s.row.Reset()
	if err := s.csv.Write(cells); err != nil {
		return fmt.Errorf("etl: %s: %w", s.path, err)
	}
	s.csv.Flush()
	if err := s.csv.Error(); err != nil {
		return fmt.Errorf("etl: %s: %w", s.path, err)
	}
	if _, err := s.lines.Write(s.row.Bytes()); err != nil {
		return fmt.Errorf("etl: %s: %w", s.path, err)
	}
	return nil
}

// csvRow fills s.cells from rec.
func (s *FileSink) csvRow(rec Record) error {
	for k := range rec {
		if _, ok := s.column[k]; !ok {
			return fmt.Errorf("field %q is not a column of %s (columns: %v)", k, s.path, s.header)
		}
	}
	for i, h := range s.header {
		cell, err := csvCell(rec[h])
		if err != nil {
			return fmt.Errorf("field %q: %w", h, err)
		}
		s.cells[i] = cell
	}
	return nil
}

// Flush writes the buffer out and fsyncs the file. A context that ended
// (the run's timeout) flushes nothing.
func (s *FileSink) Flush(ctx context.Context) error {
	if s.f == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etl: %s: not flushing: %w", s.path, err)
	}
	if s.jsonl != nil {
		if err := s.jsonl.w.Flush(); err != nil {
			return fmt.Errorf("etl: %s: %w", s.path, err)
		}
	} else if err := s.lines.Flush(); err != nil {
		return fmt.Errorf("etl: %s: %w", s.path, err)
	}
	if err := fsync(s.f); err != nil {
		return fmt.Errorf("etl: %s: fsync: %w", s.path, err)
	}
	s.app.flushed()
	return nil
}

// Discard drops what was written since the last Flush: the buffer, and
// lines the buffer already wrote out to the file, which are cut off again
// when no other writer appended after them. The pipeline calls it when a
// run fails, so a batch that was not acknowledged leaves nothing behind.
func (s *FileSink) Discard() {
	if s.f == nil {
		return
	}
	if s.jsonl != nil {
		s.jsonl.w.buf = s.jsonl.w.buf[:0]
		s.app.undo()
		return
	}
	s.lines.buf = s.lines.buf[:0]
	s.app.undo()
	// The header row may have gone with the discarded lines.
	s.header, s.column, s.cells = nil, nil, nil
	if header, err := readCSVHeader(s.path); err == nil && header != nil {
		s.setHeader(header)
	}
}

// Close flushes and closes the file.
func (s *FileSink) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.Flush(context.Background())
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("etl: %s: %w", s.path, cerr)
	}
	s.f = nil
	return err
}

// readCSVHeader returns the header row of an existing CSV file, or nil when
// the file is empty.
func readCSVHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("etl: file sink: %w", err)
	}
	defer f.Close()
	head, err := csv.NewReader(bufio.NewReader(f)).Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("etl: %s: reading the header row: %w", path, err)
	}
	return slices.Clone(head), nil
}

// fsync is (*os.File).Sync; tests replace it to see when it happens.
var fsync = (*os.File).Sync

// makeParents creates the missing folders of path's parent. The path is in
// the caller's error message: os.MkdirAll's names the folder that failed.
func makeParents(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
