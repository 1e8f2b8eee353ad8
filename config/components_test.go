package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/agora-etl/agora/etl"
)

// The components the tests register: small real implementations with the
// configuration schemas of the built-in ones, so the loader is tested
// against schemas it does not know.

type iterableConfig struct {
	Records []etl.Record `toml:"records"`
}

type iterableSource struct{ records []etl.Record }

func (s *iterableSource) Read(_ context.Context, max int) (etl.Batch, error) {
	if len(s.records) == 0 {
		return etl.Batch{}, io.EOF
	}
	n := min(max, len(s.records))
	b := etl.Batch{Records: s.records[:n]}
	s.records = s.records[n:]
	return b, nil
}

type fileConfig struct {
	Path   string `toml:"path"`
	Format string `toml:"format"`
}

func (c *fileConfig) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, etl.FieldErrorf("path", "is required"))
	}
	if c.Format != "jsonl" && c.Format != "csv" {
		errs = append(errs, etl.FieldErrorf("format", "%q is not a format: use \"jsonl\" or \"csv\"", c.Format))
	}
	return errors.Join(errs...)
}

type streamConfig struct {
	URL    string `toml:"url"`
	Stream string `toml:"stream"`
	MaxLen int64  `toml:"maxlen"`
	TLS    struct {
		CA       string `toml:"ca"`
		Insecure bool   `toml:"insecure"`
	} `toml:"tls"`
}

func (c *streamConfig) Validate() error {
	if c.URL == "" {
		return etl.FieldErrorf("url", "is required")
	}
	if c.Stream == "" {
		return errors.New("a stream name is required")
	}
	return nil
}

type stdoutConfig struct{}

// bufferSink writes one JSON object a line, like the stdout sink. Sinks of
// pipelines running at once share the buffer, and so the mutex.
type bufferSink struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (s *bufferSink) Write(_ context.Context, records []etl.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	enc := json.NewEncoder(s.buf)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

type rejectConfig struct {
	Field string `toml:"field"`
}

// rejectSink refuses records that have its field and keeps the others.
type rejectSink struct {
	field string
	mu    *sync.Mutex
	got   *[]etl.Record
}

func (s *rejectSink) Write(_ context.Context, records []etl.Record) error {
	if s.mu != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	var rej etl.RejectedError
	for i, r := range records {
		if _, bad := r[s.field]; bad {
			rej.Rejections = append(rej.Rejections, etl.Rejection{Index: i, Err: errors.New("refused")})
			continue
		}
		*s.got = append(*s.got, r)
	}
	if len(rej.Rejections) > 0 {
		return &rej
	}
	return nil
}

// testOutputs is where the test components write.
type testOutputs struct {
	mu       sync.Mutex
	stdout   bytes.Buffer
	stream   []etl.Record
	accepted []etl.Record
}

// testRegistry registers iterable, file (source), stdout, redis_stream and
// reject (sinks), writing to out.
func testRegistry(out *testOutputs) *etl.Registry {
	r := etl.NewRegistry()
	etl.RegisterSource(r, "iterable", "inline records", func(_ context.Context, c iterableConfig) (etl.Source, error) {
		return &iterableSource{records: c.Records}, nil
	})
	etl.RegisterSource(r, "file", "files", func(_ context.Context, c fileConfig) (etl.Source, error) {
		return nil, fmt.Errorf("cannot open %s", c.Path)
	})
	etl.RegisterSink(r, "stdout", "stdout", func(_ context.Context, _ stdoutConfig) (etl.Sink, error) {
		return &bufferSink{mu: &out.mu, buf: &out.stdout}, nil
	})
	etl.RegisterSink(r, "redis_stream", "a stream", func(_ context.Context, c streamConfig) (etl.Sink, error) {
		return &rejectSink{field: "\x00never", mu: &out.mu, got: &out.stream}, nil
	})
	etl.RegisterSink(r, "reject", "rejects records with field", func(_ context.Context, c rejectConfig) (etl.Sink, error) {
		return &rejectSink{field: c.Field, mu: &out.mu, got: &out.accepted}, nil
	})
	return r
}
