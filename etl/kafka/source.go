package kafka

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// Source reads Kafka topics through a consumer group, at least once; see
// the package doc. It is used by one goroutine at a time, as a pipeline
// does, and its batches must be acknowledged in the order they were read.
type Source struct {
	cfg     SourceConfig
	topics  []string
	opts    []kgo.Opt
	block   time.Duration
	key     string // the idle-client key; "" when the client is not to be kept
	cl      *kgo.Client
	ready   chan struct{} // closed once a new client can have records (see awaitReady); nil for a kept one
	unacked int           // batches handed out and not acknowledged
	broken  bool          // a poll or a commit failed: the client is not kept
	closed  bool
	dec     decoder
}

// NewSource returns a source; it joins the group at the first Read, which
// waits for the group to assign it partitions (up to JoinTimeout) before
// its block time starts. opts are added to the client's options (TLS,
// SASL, timeouts; the source sets OnPartitionsAssigned itself); a source
// given any does not share its client with later runs.
func NewSource(cfg SourceConfig, opts ...kgo.Opt) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Start == "" {
		cfg.Start = StartEarliest
	}
	s := &Source{cfg: cfg, topics: cfg.topics(), opts: opts, block: DefaultBlock}
	if cfg.Block > 0 {
		s.block = time.Duration(cfg.Block)
	}
	if len(opts) == 0 {
		s.key = strings.Join([]string{strings.Join(cfg.Brokers, ","), cfg.Group, cfg.Start, strings.Join(s.topics, ","), s.block.String()}, "\x00")
	}
	return s, nil
}

// Name is "kafka(TOPIC[,TOPIC...])".
func (s *Source) Name() string { return "kafka(" + strings.Join(s.topics, ",") + ")" }

// Type is "kafka".
func (s *Source) Type() string { return "kafka" }

// client returns the source's client: one kept from an earlier run of the
// same configuration, else a new one.
func (s *Source) client() (*kgo.Client, error) {
	if s.cl != nil {
		return s.cl, nil
	}
	if s.key != "" {
		if cl := takeIdle(s.key); cl != nil {
			s.cl = cl
			return cl, nil
		}
	}
	reset := kgo.NewOffset().AtStart()
	if s.cfg.Start == StartLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	ready := newReadiness()
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(s.cfg.Brokers...),
		kgo.ConsumerGroup(s.cfg.Group),
		kgo.ConsumeTopics(s.topics...),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// A broker holds an empty fetch at most this long: a first read
		// waiting for the first fetch answer waits about one block.
		kgo.FetchMaxWait(min(max(s.block, 10*time.Millisecond), DefaultBlock)),
	}, s.opts...)
	opts = append(opts, kgo.OnPartitionsAssigned(ready.assigned), kgo.WithHooks(ready))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, s.fail("creating the client", err)
	}
	s.cl, s.ready = cl, ready.done
	return cl, nil
}

// JoinTimeout bounds how long the first read of a new client waits to be
// ready before its block time starts: joining the group, then looking up
// the committed offsets, take a few round trips, longer than a short block.
const JoinTimeout = 30 * time.Second

// awaitReady waits until a new client is ready, JoinTimeout passed, or
// the wait is cut short (shutdown, ctx).
func (s *Source) awaitReady(ctx context.Context) {
	if s.ready == nil {
		return
	}
	wait, cancel := waitContext(ctx, JoinTimeout)
	defer cancel()
	select {
	case <-s.ready:
		s.ready = nil
	case <-wait.Done():
	}
}

// Read returns the next at most max records; an empty batch when none
// arrived within the block time or a graceful shutdown was asked for.
func (s *Source) Read(ctx context.Context, max int) (etl.Batch, error) {
	if s.closed {
		return etl.Batch{}, s.fail("reading", errors.New("source closed"))
	}
	cl, err := s.client()
	if err != nil {
		return etl.Batch{}, err
	}
	s.awaitReady(ctx)
	wait, cancel := waitContext(ctx, s.block)
	fetches := cl.PollRecords(wait, max)
	cancel()
	recs := fetches.Records()
	if len(recs) == 0 {
		if s.unacked == 0 {
			cl.AllowRebalance()
		}
		if err := ctx.Err(); err != nil {
			return etl.Batch{}, err
		}
		if err := pollError(fetches); err != nil {
			s.broken = true
			return etl.Batch{}, s.fail("polling", err)
		}
		return etl.Batch{}, nil
	}
	s.unacked++
	out := make([]etl.Record, len(recs))
	for i, r := range recs {
		rec := s.dec.record(r.Value)
		if s.cfg.KeyField != "" {
			if r.Key == nil {
				rec[s.cfg.KeyField] = nil
			} else {
				rec[s.cfg.KeyField] = string(r.Key)
			}
		}
		if s.cfg.IDField != "" {
			rec[s.cfg.IDField] = r.Topic + "/" + strconv.FormatInt(int64(r.Partition), 10) + "/" + strconv.FormatInt(r.Offset, 10)
		}
		out[i] = rec
	}
	return etl.Batch{Records: out, Ack: func(ctx context.Context) error {
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			s.broken = true
			return s.fail("committing offsets", err)
		}
		s.unacked--
		if s.unacked == 0 {
			cl.AllowRebalance()
		}
		return nil
	}}, nil
}

// pollError is the first error of fetches that is not the end of the
// wait (its deadline, or the shutdown).
func pollError(fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue
		}
		return fe.Err
	}
	return nil
}

// waitContext is ctx, ended also after block and when a graceful shutdown
// is asked for.
func waitContext(ctx context.Context, block time.Duration) (context.Context, context.CancelFunc) {
	wait, cancel := context.WithTimeout(ctx, block)
	shutdown := runtime.ShutdownRequested(ctx)
	if shutdown == nil {
		return wait, cancel
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-shutdown:
			cancel()
		case <-stop:
		}
	}()
	return wait, func() { close(stop); cancel() }
}

// Close ends the source. A client whose every batch was acknowledged stays
// in the group for the next run of the same configuration (see IdleClose);
// otherwise it is closed at once, committing nothing, and leaves the group,
// so the records of an unacknowledged batch are read again.
func (s *Source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	cl := s.cl
	s.cl = nil
	if cl == nil {
		return nil
	}
	if s.key != "" && s.unacked == 0 && !s.broken {
		cl.AllowRebalance()
		putIdle(s.key, cl)
		return nil
	}
	cl.CloseAllowingRebalance()
	return nil
}

func (s *Source) fail(what string, err error) error {
	return fail("source", strings.Join(s.topics, ","), s.cfg.Brokers, what, err)
}
