package etl

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
)

// The after_read values of the file source.
const (
	// AfterReadKeep leaves read files where they are (the default).
	AfterReadKeep = "keep"
	// AfterReadMove moves a file read to its end into move_to.
	AfterReadMove = "move"
	// AfterReadDelete deletes a file read to its end.
	AfterReadDelete = "delete"
)

// StateNone, as a file source's state, keeps no read state: every run reads
// every file from its start.
const StateNone = "none"

// DefaultFileSettle is how long a file must have stayed unchanged before
// the file source reads a last line that has no line break yet: until
// then a writer may still be writing it.
const DefaultFileSettle = 2 * time.Second

// FileSourceConfig configures the "file" source.
type FileSourceConfig struct {
	// Path is a file, or a glob pattern (filepath.Match syntax) of files read
	// in sorted order. In a config file a relative path starts at the
	// file's directory.
	Path string `toml:"path"`
	// Format is "jsonl" or "csv"; empty means from each file's extension
	// (.jsonl, .ndjson, .json: jsonl; .csv: csv).
	Format string `toml:"format"`
	// AfterRead is what happens to a file once its every record was
	// acknowledged: "keep" (the default), "move" (into MoveTo) or
	// "delete". It needs a read state.
	AfterRead string `toml:"after_read"`
	// MoveTo is the directory read files move to with after_read = "move",
	// created when missing; it must be on the files' file system.
	MoveTo string `toml:"move_to"`
	// State is where the source remembers what it has read: a Redis URL
	// (redis://, rediss://, unix://, redis+cluster://, redis+sentinel://),
	// a directory for state files, or "none" (every run reads everything).
	// Empty means: the state the
	// worker provides (the coordinator's Redis when leases go through
	// Redis), else, in a config file, the directory .agora/read-state
	// beside the file; from Go without either, none.
	State string `toml:"state"`
	// NullIf lists the CSV cells read as null (nil) instead of as
	// strings: null_if = [""] makes an empty cell a NULL in a SQL sink
	// rather than an empty string a timestamp or number column refuses.
	// It applies to every column; JSON lines say null themselves.
	NullIf []string `toml:"null_if"`

	// localState is the state directory a config file implies, set by
	// ResolvePaths.
	localState string
}

// ResolvePaths makes Path, MoveTo and a State directory relative to dir,
// and makes dir/.agora/read-state the default state.
func (c *FileSourceConfig) ResolvePaths(dir string) {
	c.Path = resolvePath(dir, c.Path)
	c.MoveTo = resolvePath(dir, c.MoveTo)
	if c.State != "" && c.State != StateNone && !strings.Contains(c.State, "://") {
		c.State = resolvePath(dir, c.State)
	}
	c.localState = filepath.Join(dir, ".agora", "read-state")
}

// Validate checks the path pattern, the format and what happens after a
// read.
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
	switch c.AfterRead {
	case "", AfterReadKeep, AfterReadDelete:
		if c.MoveTo != "" {
			errs = append(errs, FieldErrorf("move_to", "is only used with after_read = %q", AfterReadMove))
		}
	case AfterReadMove:
		if c.MoveTo == "" {
			errs = append(errs, FieldErrorf("move_to", "is missing: after_read = %q needs the directory to move read files to", AfterReadMove))
		}
	default:
		errs = append(errs, FieldErrorf("after_read", "%q is not an after_read; use %q, %q or %q", c.AfterRead, AfterReadKeep, AfterReadMove, AfterReadDelete))
	}
	if c.State == StateNone && c.AfterRead != "" && c.AfterRead != AfterReadKeep {
		errs = append(errs, FieldErrorf("after_read", "%q needs a read state, and state is %q", c.AfterRead, StateNone))
	}
	format := c.Format
	if format == "" && !hasMeta(c.Path) {
		format, _ = formatOf("", c.Path)
	}
	if err := checkNullIf(format, c.NullIf); err != nil {
		errs = append(errs, err)
	}
	if strings.Contains(c.State, "://") {
		if _, err := redisurl.Parse(c.State); err != nil {
			errs = append(errs, &FieldError{Key: "state", Err: err})
		}
	}
	return errors.Join(errs...)
}

// FileSource reads the records of every file a glob matches, in sorted
// order. JSON lines: one object a line, blank lines skipped; numbers stay
// json.Number, so large integers keep every digit. CSV: the first row
// names the fields, every value is a string. A pattern without glob
// characters must name an existing file (unless after_read moves or
// deletes it); a pattern matching no file reads nothing, and says so in a
// WARN log line when it starts matching nothing (not at every run).
//
// With a read state (see FileSourceConfig.State), the source reads every
// file once: it remembers, per file, its size and modification time and
// the offset up to which its records were acknowledged, and acknowledges
// each batch (Batch.Ack, after every sink and the dead-letter queue took
// it) by saving the new offsets. A later run skips a file whose size and
// modification time are those it had when read to its end, reads only the
// new lines of a file that grew, and reads a file that shrank or changed
// otherwise as a new one. A run that failed, or a process that died,
// before a batch was acknowledged leaves the old offsets: those records
// are read again (at least once). A file's last line without a line break
// is read only once the file has not changed for DefaultFileSettle. Once a
// file was read to its end and acknowledged, after_read moves or deletes
// it and its mark is dropped.
//
// Marks are kept under the pipeline id and the resolved pattern, so two
// pipelines reading the same files each read them all.
type FileSource struct {
	cfg    FileSourceConfig
	files  []fileEntry
	opened bool
	cur    *fileReader
	buf    []Record

	state    ReadState
	closer   io.Closer // a Redis client the source made for its state
	key      string
	progress []fileProgress // read since the last batch handed out
	now      func() time.Time
}

// fileEntry is a file to read and where to start.
type fileEntry struct {
	path        string
	size, mtime int64
	from        FileMark
}

// fileProgress is how far a batch got in one file.
type fileProgress struct {
	path string
	mark FileMark
	done bool // read to its end
}

// FileSourceOption configures NewFileSource.
type FileSourceOption func(*FileSource)

// WithReadState keeps the marks in state when the configuration's State
// is empty.
func WithReadState(state ReadState) FileSourceOption {
	return func(s *FileSource) {
		if s.cfg.State == "" && state != nil {
			s.state = state
		}
	}
}

// NewFileSource returns a file source; the pattern is expanded at the first
// Read.
func NewFileSource(cfg FileSourceConfig, opts ...FileSourceOption) (*FileSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &FileSource{cfg: cfg, now: time.Now}
	switch {
	case cfg.State == StateNone:
	case strings.Contains(cfg.State, "://"):
		u, _ := redisurl.Parse(cfg.State)
		client := u.NewClient()
		s.state, s.closer = NewRedisReadState(client, ""), client
	case cfg.State != "":
		s.state = NewLocalReadState(cfg.State)
	}
	for _, opt := range opts {
		opt(s)
	}
	if s.state == nil && cfg.State == "" && cfg.localState != "" {
		s.state = NewLocalReadState(cfg.localState)
	}
	if s.state == nil && cfg.AfterRead != "" && cfg.AfterRead != AfterReadKeep {
		return nil, FieldErrorf("after_read", "%q needs a read state: set state", cfg.AfterRead)
	}
	return s, nil
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
		if err := s.expand(ctx); err != nil {
			return Batch{}, err
		}
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
			r, err := s.open(s.files[0])
			if err != nil {
				return Batch{}, err
			}
			s.files = s.files[1:]
			s.cur = r
		}
		var err error
		s.buf, err = s.cur.read(s.buf, max)
		if errors.Is(err, io.EOF) {
			s.note(true)
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
		// Files without records: nothing to lose, so their marks are
		// saved at once (every batch before was acknowledged already).
		if err := s.commit(ctx, s.takeProgress()); err != nil {
			return Batch{}, err
		}
		return Batch{}, io.EOF
	}
	b := Batch{Records: s.buf}
	if s.state != nil {
		if s.cur != nil && s.cur.atEnd() {
			// The batch ends with the file: its acknowledgement finishes
			// the file, rather than the next batch's.
			s.note(true)
			cerr := s.cur.close()
			s.cur = nil
			if cerr != nil {
				return Batch{}, cerr
			}
		}
		if s.cur != nil {
			s.note(false)
		}
		progress := s.takeProgress()
		b.Ack = func(ctx context.Context) error { return s.commit(ctx, progress) }
	}
	return b, nil
}

// note records how far the current file was read.
func (s *FileSource) note(eof bool) {
	if s.state == nil {
		return
	}
	r := s.cur
	mark := FileMark{Size: r.entry.size, ModTime: r.entry.mtime, Offset: r.offset, Line: r.line}
	s.progress = append(s.progress, fileProgress{path: r.path, mark: mark, done: eof && r.offset == r.entry.size})
}

func (s *FileSource) takeProgress() []fileProgress {
	p := s.progress
	s.progress = nil
	return p
}

// commit saves the marks of progress, then applies after_read to the files
// read to their end and drops their marks.
func (s *FileSource) commit(ctx context.Context, progress []fileProgress) error {
	if s.state == nil || len(progress) == 0 {
		return nil
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	set := make(map[string]FileMark, len(progress))
	var finished []string
	for _, p := range progress {
		set[p.path] = p.mark
		if p.done && s.cfg.AfterRead != "" && s.cfg.AfterRead != AfterReadKeep {
			finished = append(finished, p.path)
		}
	}
	if err := s.state.Save(ctx, s.key, lease.FencingToken, set, nil); err != nil {
		return fmt.Errorf("etl: file source: %w", err)
	}
	return s.finish(ctx, finished)
}

// finish moves or deletes files read to their end, then drops their marks.
// A crash in between leaves marks saying the files were read, and the next
// run finishes them.
func (s *FileSource) finish(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	for _, p := range paths {
		if err := s.afterRead(p); err != nil {
			return err
		}
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	if err := s.state.Save(ctx, s.key, lease.FencingToken, nil, paths); err != nil {
		return fmt.Errorf("etl: file source: %w", err)
	}
	return nil
}

func (s *FileSource) afterRead(path string) error {
	switch s.cfg.AfterRead {
	case AfterReadDelete:
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("etl: file source: after_read: %w", err)
		}
	case AfterReadMove:
		if err := os.MkdirAll(s.cfg.MoveTo, 0o755); err != nil {
			return fmt.Errorf("etl: file source: move_to: %w", err)
		}
		target := filepath.Join(s.cfg.MoveTo, filepath.Base(path))
		if _, err := os.Lstat(target); err == nil {
			// Never replace an earlier file of the same name.
			target += "." + strconv.FormatInt(s.now().UnixNano(), 10)
		}
		if err := os.Rename(path, target); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("etl: file source: after_read: %w", err)
		}
	}
	return nil
}

// Close closes the file being read and the state's connection.
func (s *FileSource) Close() error {
	var err error
	if s.cur != nil {
		err = s.cur.close()
		s.cur = nil
	}
	if s.closer != nil {
		err = errors.Join(err, s.closer.Close())
		s.closer = nil
	}
	return err
}

// expand lists the files to read and, with a read state, where to start in
// each.
func (s *FileSource) expand(ctx context.Context) error {
	pattern := s.cfg.Path
	if abs, err := filepath.Abs(pattern); err == nil {
		pattern = abs
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	s.key = lease.PipelineID + " " + pattern
	files, err := s.match()
	if err != nil {
		return err
	}
	s.warnIfEmpty(ctx, len(files) == 0)
	var marks map[string]FileMark
	if s.state != nil {
		if marks, err = s.state.Load(ctx, s.key); err != nil {
			return fmt.Errorf("etl: file source: %w", err)
		}
	}
	var finished []string
	for _, f := range files {
		e := fileEntry{path: f}
		if s.state != nil {
			st, err := os.Stat(f)
			if err != nil {
				return fmt.Errorf("etl: file source: %w", err)
			}
			e.size, e.mtime = st.Size(), st.ModTime().UnixNano()
			m, seen := marks[f]
			switch {
			case !seen:
			case m.Offset == e.size && m.ModTime == e.mtime:
				// Read to its end before; after_read may not have happened.
				if s.cfg.AfterRead != "" && s.cfg.AfterRead != AfterReadKeep {
					finished = append(finished, f)
				}
				continue
			case m.Offset < e.size && (m.ModTime == e.mtime || m.Size <= e.size):
				e.from = m // grown, or not acknowledged to its end
			}
		}
		s.files = append(s.files, e)
	}
	return s.finish(ctx, finished)
}

// match expands the pattern.
func (s *FileSource) match() ([]string, error) {
	if !hasMeta(s.cfg.Path) {
		if _, err := os.Stat(s.cfg.Path); err != nil {
			if errors.Is(err, os.ErrNotExist) && s.cfg.AfterRead != "" && s.cfg.AfterRead != AfterReadKeep {
				return nil, nil // moved or deleted after an earlier read
			}
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

// emptyPatterns remembers, per source key, whether its pattern matched
// nothing at its last expansion in this process, so the WARN comes once
// per change, not once per run of a pipeline polling an empty directory.
var emptyPatterns sync.Map

// fileSourceLogger is where the source logs; tests replace it.
var fileSourceLogger = slog.Default

func (s *FileSource) warnIfEmpty(ctx context.Context, empty bool) {
	prev, _ := emptyPatterns.Swap(s.key, empty)
	was, _ := prev.(bool)
	switch {
	case empty && !was:
		fileSourceLogger().LogAttrs(ctx, slog.LevelWarn, "file source: the path matches no file", slog.String("path", s.cfg.Path))
	case !empty && was:
		fileSourceLogger().LogAttrs(ctx, slog.LevelInfo, "file source: the path matches files again", slog.String("path", s.cfg.Path))
	}
}

// open opens the next file at its start offset. With a read state, a last
// line without a line break in a file changed within DefaultFileSettle is
// left for a later run.
func (s *FileSource) open(e fileEntry) (*fileReader, error) {
	limit := int64(-1)
	if s.state != nil {
		limit = e.size
		if fresh := s.now().Sub(time.Unix(0, e.mtime)) < DefaultFileSettle; fresh && e.size > e.from.Offset {
			end, err := lastLineEnd(e.path, e.size)
			if err != nil {
				return nil, fmt.Errorf("etl: file source: %w", err)
			}
			limit = max(end, e.from.Offset)
		}
	}
	r, err := openFileReader(e.path, s.cfg.Format, e.from, limit)
	if err != nil {
		return nil, err
	}
	r.entry, r.nullIf = e, s.cfg.NullIf
	return r, nil
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[\`) }

// fileReader reads the records of one file.
type fileReader struct {
	path   string
	entry  fileEntry
	offset int64 // bytes consumed through the last record returned
	base   int64 // csv: offset the csv reader started at
	baseLn int   // csv: lines before base
	f      *os.File
	lines  *bufio.Reader // jsonl
	line   int           // jsonl: lines read
	fast   recordDecoder // jsonl
	long   []byte        // jsonl: a line longer than the buffer
	csv    *csv.Reader   // csv
	br     *bufio.Reader // what lines or csv read from
	header []string
	nullIf []string // csv: cells read as nil
}

// openFileReader opens path to read from the mark's offset up to limit
// bytes (-1: to the end).
func openFileReader(path, format string, from FileMark, limit int64) (*fileReader, error) {
	format, err := formatOf(format, path)
	if err != nil {
		return nil, fmt.Errorf("etl: file source: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("etl: file source: %w", err)
	}
	if limit < 0 {
		limit = math.MaxInt64
	}
	r := &fileReader{path: path, f: f, offset: from.Offset}
	if format == FormatJSONL {
		r.lines = bufio.NewReaderSize(io.NewSectionReader(f, from.Offset, limit-from.Offset), 64<<10)
		r.br, r.line = r.lines, from.Line
		return r, nil
	}
	// The header comes from the file's start, the rows from the offset.
	r.br = bufio.NewReaderSize(io.NewSectionReader(f, 0, limit), 64<<10)
	r.csv = csv.NewReader(r.br)
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
	if from.Offset > 0 {
		r.base, r.baseLn, r.line = from.Offset, from.Line, from.Line
		r.br = bufio.NewReaderSize(io.NewSectionReader(f, from.Offset, limit-from.Offset), 64<<10)
		r.csv = csv.NewReader(r.br)
		r.csv.ReuseRecord = true
	} else {
		r.offset = r.csv.InputOffset()
		r.line, _ = r.csv.FieldPos(0)
	}
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
			rec[h] = cellValue(row[i], r.nullIf)
		}
		buf = append(buf, rec)
		r.offset = r.base + r.csv.InputOffset()
		line, _ := r.csv.FieldPos(len(row) - 1)
		r.line = r.baseLn + line
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
	r.offset += int64(len(b))
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
		return fmt.Errorf("etl: %s:%d:%d: %w", r.path, r.baseLn+pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("etl: %s: %w", r.path, err)
}

// atEnd reports whether nothing is left to read: the records returned so
// far end the file.
func (r *fileReader) atEnd() bool {
	if r.csv != nil && r.header == nil {
		return true
	}
	_, err := r.br.Peek(1)
	return errors.Is(err, io.EOF)
}

func (r *fileReader) close() error { return r.f.Close() }
