package etl

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
)

// RedisStreamSinkConfig configures the "redis_stream" sink.
type RedisStreamSinkConfig struct {
	// URL is the Redis, in the forms the redis_stream source takes: one
	// server, a Redis Cluster or a primary found through Sentinels.
	URL string `toml:"url"`
	// Stream is the stream key entries are added to.
	Stream string `toml:"stream"`
	// MaxLen, when positive, trims the stream to about this many entries
	// (XADD MAXLEN ~): Redis trims whole nodes, so a few more remain.
	MaxLen int64 `toml:"maxlen"`
}

// Validate checks every key.
func (c RedisStreamSinkConfig) Validate() error {
	var errs []error
	if _, err := redisurl.Parse(c.URL); err != nil {
		errs = append(errs, &FieldError{Key: "url", Err: err})
	}
	if c.Stream == "" {
		errs = append(errs, FieldErrorf("stream", "is empty; name the stream key"))
	}
	if c.MaxLen < 0 {
		errs = append(errs, FieldErrorf("maxlen", "%d is negative; leave it out for no trimming", c.MaxLen))
	}
	return errors.Join(errs...)
}

// RedisStreamSink adds every record to a stream as one entry whose single
// field StreamDataField holds the record as JSON. A batch is one pipelined
// round trip of XADDs.
type RedisStreamSink struct {
	cfg    RedisStreamSinkConfig
	client redis.UniversalClient
	shown  string
	encode entryEncoder
	args   []redis.XAddArgs
	values [][]any
}

// NewRedisStreamSink returns a sink; it connects at the first Write.
func NewRedisStreamSink(cfg RedisStreamSinkConfig) (*RedisStreamSink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := redisurl.Parse(cfg.URL)
	return &RedisStreamSink{cfg: cfg, client: u.NewClient(), shown: u.Redacted}, nil
}

// Name is "redis_stream(STREAM)".
func (s *RedisStreamSink) Name() string { return "redis_stream(" + s.cfg.Stream + ")" }

// Type is "redis_stream".
func (s *RedisStreamSink) Type() string { return "redis_stream" }

// Write adds records in one pipeline. A record JSON cannot encode is
// rejected; any Redis error fails the batch.
func (s *RedisStreamSink) Write(ctx context.Context, records []Record) error {
	var rejections []Rejection
	pipe := s.client.Pipeline()
	if cap(s.args) < len(records) {
		s.args = make([]redis.XAddArgs, len(records))
		s.values = make([][]any, len(records))
	}
	s.encode.reset()
	n := 0
	for i, rec := range records {
		data, err := s.encode.value(rec)
		if err != nil {
			rejections = append(rejections, Rejection{Index: i, Err: err})
			continue
		}
		a := &s.args[n]
		if s.values[n] == nil {
			s.values[n] = make([]any, 2)
		}
		s.values[n][0], s.values[n][1] = StreamDataField, data
		*a = redis.XAddArgs{Stream: s.cfg.Stream, Values: s.values[n], ID: "*"}
		if s.cfg.MaxLen > 0 {
			a.MaxLen, a.Approx = s.cfg.MaxLen, true
		}
		pipe.XAdd(ctx, a)
		n++
	}
	if rejections != nil && RejectsFailRun(ctx) {
		return &RejectedError{Rejections: rejections} // nothing added
	}
	if n > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("etl: redis_stream %s: not adding %d entries: %w", s.cfg.Stream, n, err)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("etl: redis_stream %s at %s: adding %d entries: %w", s.cfg.Stream, s.shown, n, err)
		}
	}
	if rejections != nil {
		return &RejectedError{Rejections: rejections}
	}
	return nil
}

// Close closes the connection.
func (s *RedisStreamSink) Close() error { return s.client.Close() }
