package etl

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileSourceConfig configures the "file" source.
type FileSourceConfig struct {
	// Path is a file, or a glob pattern (filepath.Match syntax) of files read
	// in sorted order.
	Path string `toml:"path"`
	// Format is "jsonl" or "csv"; empty means from each file's extension
	// (.jsonl, .ndjson, .json: jsonl; .csv: csv).
	Format string `toml:"format"`
}

// Validate checks the path pattern and the format.
func (c FileSourceConfig) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, FieldErrorf("path", "is empty; name a file or a glob such as \"in/*.jsonl\""))
	} else if _, err := filepath.Match(c.Path, ""); err != nil {
		errs = append(errs, FieldErrorf("path", "%q is not a valid glob pattern: %w", c.Path, err))
	} else if c.Format == "" && !hasMeta(c.Path) {
		if _, err := formatOf("", c.Path); err != nil {
			errs = append(errs, FieldErrorf("format", "%w", err))
		}
	}
	if err := checkFormat(c.Format); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FileSource reads the records of every file a glob matches, in sorted
// order, each run from the start. JSON lines: one object a line, blank
// lines skipped; numbers stay json.Number, so large integers keep every
// digit. CSV: the first row names the fields, every value is a string.
// A pattern without glob characters must name an existing file; a pattern
// matching no file reads nothing.
type FileSource struct {
	cfg    FileSourceConfig
	files  []string
	opened bool
	cur    *fileReader
	buf    []Record
}

// NewFileSource returns a file source; the pattern is expanded at the first
// Read.
func NewFileSource(cfg FileSourceConfig) (*FileSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &FileSource{cfg: cfg}, nil
}

// Name is "file(PATH)".
func (s *FileSource) Name() string { return "file(" + s.cfg.Path + ")" }

// Type is "file".
func (s *FileSource) Type() string { return "file" }

// Read returns the next at most max records, then io.EOF. The returned
// slice is reused by the next Read.
func (s *FileSource) Read(ctx context.Context, max int) (Batch, error) {
	if !s.opened {
		s.opened = true
		files, err := s.expand()
		if err != nil {
			return Batch{}, err
		}
		s.files = files
	}
	s.buf = s.buf[:0]
	for len(s.buf) < max {
		if s.cur == nil {
			if len(s.files) == 0 {
				break
			}
			if err := ctx.Err(); err != nil {
				return Batch{}, err
			}
			r, err := openFileReader(s.files[0], s.cfg.Format)
			if err != nil {
				return Batch{}, err
			}
			s.files = s.files[1:]
			s.cur = r
		}
		var err error
		s.buf, err = s.cur.read(s.buf, max)
		if errors.Is(err, io.EOF) {
			cerr := s.cur.close()
			s.cur = nil
			if cerr != nil {
				return Batch{}, cerr
			}
			continue
		}
		if err != nil {
			return Batch{}, err
		}
	}
	if len(s.buf) == 0 {
		return Batch{}, io.EOF
	}
	return Batch{Records: s.buf}, nil
}

// Close closes the file being read.
func (s *FileSource) Close() error {
	if s.cur == nil {
		return nil
	}
	err := s.cur.close()
	s.cur = nil
	return err
}

func (s *FileSource) expand() ([]string, error) {
	if !hasMeta(s.cfg.Path) {
		if _, err := os.Stat(s.cfg.Path); err != nil {
			return nil, fmt.Errorf("etl: file source: %w", err)
		}
		return []string{s.cfg.Path}, nil
	}
	files, err := filepath.Glob(s.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("etl: file source: %q: %w", s.cfg.Path, err)
	}
	// Directories matched by the pattern are not inputs.
	files = slices.DeleteFunc(files, func(f string) bool {
		st, err := os.Stat(f)
		return err == nil && st.IsDir()
	})
	slices.Sort(files)
	return files, nil
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[\`) }

// fileReader reads the records of one file.
type fileReader struct {
	path   string
	f      *os.File
	lines  *bufio.Reader // jsonl
	line   int           // jsonl: lines read
	fast   recordDecoder // jsonl
	long   []byte        // jsonl: a line longer than the buffer
	csv    *csv.Reader   // csv
	header []string
}

func openFileReader(path, format string) (*fileReader, error) {
	format, err := formatOf(format, path)
	if err != nil {
		return nil, fmt.Errorf("etl: file source: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("etl: file source: %w", err)
	}
	r := &fileReader{path: path, f: f}
	br := bufio.NewReaderSize(f, 64<<10)
	if format == FormatJSONL {
		r.lines = br
		return r, nil
	}
	r.csv = csv.NewReader(br)
	r.csv.ReuseRecord = true
	head, err := r.csv.Read()
	if errors.Is(err, io.EOF) {
		return r, nil // an empty file has no records
	}
	if err != nil {
		f.Close()
		return nil, r.csvError(err)
	}
	r.header = slices.Clone(head)
	for i, h := range r.header {
		if j := slices.Index(r.header[:i], h); j >= 0 {
			f.Close()
			return nil, fmt.Errorf("etl: %s:1: column %d repeats the field name %q of column %d", path, i+1, h, j+1)
		}
	}
	return r, nil
}

// read appends records to buf until it holds max or the file ends (io.EOF).
func (r *fileReader) read(buf []Record, max int) ([]Record, error) {
	if r.lines != nil {
		for len(buf) < max {
			line, err := r.nextLine()
			if err != nil {
				return buf, err
			}
			rec, err := r.decodeLine(line)
			if err != nil {
				return buf, err
			}
			if rec != nil {
				buf = append(buf, rec)
			}
		}
		return buf, nil
	}
	if r.header == nil {
		return buf, io.EOF
	}
	for len(buf) < max {
		row, err := r.csv.Read()
		if errors.Is(err, io.EOF) {
			return buf, io.EOF
		}
		if err != nil {
			return buf, r.csvError(err)
		}
		rec := make(Record, len(r.header))
		for i, h := range r.header {
			rec[h] = row[i]
		}
		buf = append(buf, rec)
	}
	return buf, nil
}

// nextLine returns the next line, without its line break, as a string the
// record's values can share; io.EOF after the last.
func (r *fileReader) nextLine() (string, error) {
	b, err := r.lines.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = r.lines.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("etl: %s: %w", r.path, err)
	}
	if len(b) == 0 && err != nil {
		return "", io.EOF
	}
	r.line++
	return string(b), nil
}

// decodeLine decodes one line: nil for a blank one.
func (r *fileReader) decodeLine(line string) (Record, error) {
	if rec, ok := r.fast.decode(line); ok {
		return rec, nil
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var rec Record
	err := dec.Decode(&rec)
	switch {
	case errors.Is(err, io.EOF):
		return nil, nil // blank
	case err != nil:
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "" {
			err = fmt.Errorf("a JSON %s is not an object", typeErr.Value)
		}
		return nil, fmt.Errorf("etl: %s:%d: %w", r.path, r.line, err)
	case rec == nil:
		return nil, fmt.Errorf("etl: %s:%d: null is not a JSON object", r.path, r.line)
	case dec.More():
		return nil, fmt.Errorf("etl: %s:%d: more than one JSON value on the line", r.path, r.line)
	}
	return rec, nil
}

func (r *fileReader) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("etl: %s:%d:%d: %w", r.path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("etl: %s: %w", r.path, err)
}

func (r *fileReader) close() error { return r.f.Close() }
