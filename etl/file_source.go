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
// order, each run from the start. JSON lines: one object a line (an object
// may also span lines); numbers stay json.Number, so large integers keep
// every digit. CSV: the first row names the fields, every value is a string.
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
	dec    *json.Decoder // jsonl
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
		r.dec = json.NewDecoder(br)
		r.dec.UseNumber()
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
	if r.dec != nil {
		for len(buf) < max {
			var rec Record
			if err := r.dec.Decode(&rec); err != nil {
				if errors.Is(err, io.EOF) {
					return buf, io.EOF
				}
				return buf, r.jsonError(err, false)
			}
			if rec == nil {
				return buf, r.jsonError(errors.New("null is not a JSON object"), true)
			}
			buf = append(buf, rec)
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

// jsonError places a decoding error at its line. After a syntax error the
// decoder stands before the bad value (and the blanks ahead of it); after a
// type error, or a value that decoded (decoded), just past the value.
func (r *fileReader) jsonError(err error, decoded bool) error {
	var typeErr *json.UnmarshalTypeError
	isType := errors.As(err, &typeErr)
	line := lineAt(r.path, r.dec.InputOffset(), !decoded && !isType)
	if isType && typeErr.Field == "" {
		err = fmt.Errorf("a JSON %s is not an object", typeErr.Value)
	}
	return fmt.Errorf("etl: %s:%d: %w", r.path, line, err)
}

// lineAt returns the 1-based line of byte offset off of the file at path;
// with skipBlanks, of the first non-blank byte from off on.
func lineAt(path string, off int64, skipBlanks bool) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line := 1
	for i := int64(0); ; i++ {
		c, err := br.ReadByte()
		if err != nil {
			return line
		}
		if i >= off && (!skipBlanks || !isBlank(c)) {
			return line
		}
		if c == '\n' {
			line++
		}
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (r *fileReader) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("etl: %s:%d:%d: %w", r.path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("etl: %s: %w", r.path, err)
}

func (r *fileReader) close() error { return r.f.Close() }
