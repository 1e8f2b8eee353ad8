package etl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
)

// Defaults of the redis_stream source.
const (
	// DefaultStreamBlock is how long a read waits for new entries before
	// the run ends with nothing more to do.
	DefaultStreamBlock = 5 * time.Second
	// DefaultClaimIdle is how long an entry must have been pending with
	// another consumer before this one takes it over.
	DefaultClaimIdle = time.Minute
	// DefaultStreamStart is the id a new consumer group starts after: "0",
	// the whole stream.
	DefaultStreamStart = "0"
)

// RedisStreamSourceConfig configures the "redis_stream" source.
type RedisStreamSourceConfig struct {
	// URL is the Redis: one server, redis://[user:password@]host:port[/db]
	// (rediss:// for TLS, unix:///path); a Redis Cluster,
	// redis+cluster://[user:password@]host:port?addr=host2:port2&…; or a
	// primary found through Sentinels,
	// redis+sentinel://host:port?master_name=NAME&addr=…; go-redis's
	// query parameters apply (the forms of AGORA_DISTRIBUTED_REDIS_URL,
	// parsed by the same parser).
	URL string `toml:"url"`
	// Stream is the stream key.
	Stream string `toml:"stream"`
	// Group is the consumer group, created (with the stream) when missing.
	Group string `toml:"group"`
	// Consumer names this reader within the group; default the host name,
	// so replicas on different hosts differ. A restarted worker with the same
	// name re-reads its own unacknowledged entries first.
	Consumer string `toml:"consumer"`
	// Block is how long a read waits for new entries (default 5s); a read
	// that gets none ends the run.
	Block Duration `toml:"block"`
	// Start is the id the group starts after when it is created: "0" (the
	// default) reads the whole stream, "$" only entries added from then on.
	Start string `toml:"start"`
	// ClaimIdle is how long another consumer's entry must have been pending
	// before this consumer claims it (default 1m): the entries of a consumer
	// that crashed.
	ClaimIdle Duration `toml:"claim_idle"`
	// IDField, when set, adds each entry's id to its record under this
	// field, for consumers that deduplicate the at-least-once delivery.
	IDField string `toml:"id_field"`
}

var streamIDPattern = regexp.MustCompile(`^(\$|[0-9]+(-[0-9]+)?)$`)

// Validate checks every key.
func (c RedisStreamSourceConfig) Validate() error {
	var errs []error
	if _, err := redisurl.Parse(c.URL); err != nil {
		errs = append(errs, &FieldError{Key: "url", Err: err})
	}
	if c.Stream == "" {
		errs = append(errs, FieldErrorf("stream", "is empty; name the stream key"))
	}
	if c.Group == "" {
		errs = append(errs, FieldErrorf("group", "is empty; name the consumer group"))
	}
	if c.Start != "" && !streamIDPattern.MatchString(c.Start) {
		errs = append(errs, FieldErrorf("start", "%q is not a stream id; use \"0\", \"$\" or an id such as \"1700000000000-0\"", c.Start))
	}
	if err := checkDuration("block", c.Block); err != nil {
		errs = append(errs, err)
	}
	if err := checkDuration("claim_idle", c.ClaimIdle); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RedisStreamSource reads a Redis stream through a consumer group, at least
// once: an entry is acknowledged (XACK) only by Batch.Ack, which the
// pipeline calls after every sink and the dead-letter queue took the batch.
//
// Each run first re-reads this consumer's own pending entries (delivered
// before, never acknowledged: a crash or a failed run), then claims entries
// other consumers left pending for longer than claim_idle (XAUTOCLAIM), then
// reads new entries (XREADGROUP >), waiting up to block for them. A read
// that finds nothing ends the run; a graceful shutdown interrupts the wait.
// See StreamDataField for how entries become records.
type RedisStreamSource struct {
	cfg     RedisStreamSourceConfig
	client  redis.UniversalClient
	block   time.Duration
	claim   time.Duration
	grouped bool
	pending string // cursor through our own pending entries; "" when done
	claimAt string // XAUTOCLAIM cursor; "" when done
	shown   string // the URL without password
	decode  entryDecoder
	ahead   chan readResult // the read ahead in flight, if any
	quit    chan struct{}   // closed by Close: a read ahead stops waiting
}

// NewRedisStreamSource returns a source; it connects at the first Read.
func NewRedisStreamSource(cfg RedisStreamSourceConfig) (*RedisStreamSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := redisurl.Parse(cfg.URL)
	if cfg.Consumer == "" {
		cfg.Consumer = defaultConsumer()
	}
	if cfg.Start == "" {
		cfg.Start = DefaultStreamStart
	}
	s := &RedisStreamSource{
		cfg: cfg, client: u.NewClient(), block: DefaultStreamBlock, claim: DefaultClaimIdle,
		pending: "0", claimAt: "0-0", shown: u.Redacted, quit: make(chan struct{}),
	}
	if cfg.Block > 0 {
		s.block = time.Duration(cfg.Block)
	}
	if cfg.ClaimIdle > 0 {
		s.claim = time.Duration(cfg.ClaimIdle)
	}
	return s, nil
}

// defaultConsumer is the host name, which differs between replicas on
// different machines and stays the same across a restart.
func defaultConsumer() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "agora"
}

// Name is "redis_stream(STREAM)".
func (s *RedisStreamSource) Name() string { return "redis_stream(" + s.cfg.Stream + ")" }

// Type is "redis_stream".
func (s *RedisStreamSource) Type() string { return "redis_stream" }

// Consumer returns the consumer name in use.
func (s *RedisStreamSource) Consumer() string { return s.cfg.Consumer }

// Read returns the next at most max entries as records; an empty batch when
// none arrived within the block time.
func (s *RedisStreamSource) Read(ctx context.Context, max int) (Batch, error) {
	if !s.grouped {
		if err := s.createGroup(ctx); err != nil {
			return Batch{}, err
		}
		s.grouped = true
	}
	for {
		msgs, err := s.next(ctx, max)
		if err != nil {
			return Batch{}, err
		}
		if msgs == nil {
			return Batch{}, nil
		}
		b := s.batch(msgs)
		if len(b.Records) > 0 {
			return b, nil
		}
		// Only entries deleted from the stream while pending: nothing to
		// deliver, so let the group forget them and read on.
		if err := b.Ack(ctx); err != nil {
			return Batch{}, err
		}
	}
}

// next returns the next entries to deliver, nil when there are none.
func (s *RedisStreamSource) next(ctx context.Context, max int) ([]redis.XMessage, error) {
	if s.pending != "" {
		res, err := s.client.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: s.cfg.Group, Consumer: s.cfg.Consumer, Streams: []string{s.cfg.Stream, s.pending},
			Count: int64(max), Block: -1,
		}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.fail("reading pending entries", err)
		}
		if msgs := firstStream(res); len(msgs) > 0 {
			s.pending = msgs[len(msgs)-1].ID
			return msgs, nil
		}
		s.pending = ""
	}
	if s.claimAt != "" {
		msgs, start, err := s.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: s.cfg.Stream, Group: s.cfg.Group, Consumer: s.cfg.Consumer,
			MinIdle: s.claim, Start: s.claimAt, Count: int64(max),
		}).Result()
		if err != nil {
			return nil, s.fail("claiming idle entries", err)
		}
		s.claimAt = start
		if start == "0-0" {
			s.claimAt = ""
		}
		if len(msgs) > 0 {
			return msgs, nil
		}
		if s.claimAt != "" {
			return s.next(ctx, max)
		}
	}
	var msgs []redis.XMessage
	var err error
	if s.ahead != nil {
		r := <-s.ahead
		s.ahead = nil
		msgs, err = r.msgs, r.err
	} else {
		msgs, err = s.readNew(ctx, max)
	}
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	// While the pipeline writes this batch, the next one travels: a
	// stream is read at the speed of the sinks, not of the sinks plus a
	// round trip. Entries read ahead and never handed out (the run
	// stopped first) stay pending for this consumer and come first next
	// run.
	ahead := make(chan readResult, 1)
	s.ahead = ahead
	go func() {
		m, err := s.readNew(ctx, max)
		ahead <- readResult{m, err}
	}()
	return msgs, nil
}

// readResult is what a read ahead got.
type readResult struct {
	msgs []redis.XMessage
	err  error
}

// readNew reads new entries (XREADGROUP >), waiting up to the block time.
// The wait is cut into slices so a graceful shutdown is seen within one
// slice: go-redis cannot interrupt a blocking read in flight.
func (s *RedisStreamSource) readNew(ctx context.Context, max int) ([]redis.XMessage, error) {
	shutdown := runtime.ShutdownRequested(ctx)
	for waited := time.Duration(0); ; {
		slice := min(s.block-waited, shutdownSlice)
		res, err := s.client.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: s.cfg.Group, Consumer: s.cfg.Consumer, Streams: []string{s.cfg.Stream, ">"},
			Count: int64(max), Block: slice,
		}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.fail("reading new entries", err)
		}
		if msgs := firstStream(res); len(msgs) > 0 {
			return msgs, nil
		}
		waited += slice
		if waited >= s.block {
			return nil, nil
		}
		select {
		case <-shutdown:
			return nil, nil
		case <-s.quit:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
	}
}

// shutdownSlice is the longest a read waits without looking at the
// shutdown channel.
const shutdownSlice = 250 * time.Millisecond

// batch turns entries into records, with an Ack for their ids.
func (s *RedisStreamSource) batch(msgs []redis.XMessage) Batch {
	ids := make([]string, len(msgs))
	recs := make([]Record, 0, len(msgs))
	pos := make([]string, 0, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
		if m.Values == nil {
			continue // deleted from the stream while pending
		}
		rec := s.decode.record(m.Values)
		if s.cfg.IDField != "" {
			rec[s.cfg.IDField] = m.ID
		}
		recs = append(recs, rec)
		pos = append(pos, m.ID)
	}
	return Batch{Records: recs, Positions: pos, Ack: func(ctx context.Context) error {
		if err := s.client.XAck(ctx, s.cfg.Stream, s.cfg.Group, ids...).Err(); err != nil {
			return s.fail("acknowledging entries", err)
		}
		return nil
	}}
}

func (s *RedisStreamSource) createGroup(ctx context.Context) error {
	err := s.client.XGroupCreateMkStream(ctx, s.cfg.Stream, s.cfg.Group, s.cfg.Start).Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return s.fail("creating the consumer group", err)
	}
	return nil
}

func (s *RedisStreamSource) fail(what string, err error) error {
	return fmt.Errorf("etl: redis_stream %s at %s: %s: %w", s.cfg.Stream, s.shown, what, err)
}

// Close stops a read ahead in flight (within one 250 ms slice of its wait),
// waits for it and closes the connection. Entries it got stay pending for
// this consumer.
func (s *RedisStreamSource) Close() error {
	select {
	case <-s.quit:
		return nil // closed before
	default:
		close(s.quit)
	}
	if s.ahead != nil {
		<-s.ahead
		s.ahead = nil
	}
	return s.client.Close()
}

func firstStream(res []redis.XStream) []redis.XMessage {
	if len(res) == 0 {
		return nil
	}
	return res[0].Messages
}
