package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// DefaultBlock is how long a read waits for records before the run ends.
const DefaultBlock = 5 * time.Second

// Source consumes topics through a consumer group, at least once: the
// offsets of a batch are committed only by Batch.Ack, which the pipeline
// calls after every sink and the dead-letter queue took the batch, and
// the group does not move partitions between a poll and its commit. A run
// that fails, or a process that dies, before the commit leaves the offsets
// where they were: the next consumer of the group reads those records
// again.
//
// Each message's value becomes a record: a JSON object as its fields
// (numbers as json.Number), anything else as {"value": "<the text>"}.
//
// A consumer stays in its group between the runs of a continuous schedule
// (one run ends when a read waits Block for nothing): the client is kept
// for the next run when every batch it handed out was committed, and
// closed, leaving the group, otherwise, so what was not committed is
// fetched again from the committed offsets.
type Source struct {
	cfg     SourceConfig
	opts    []kgo.Opt
	key     string
	client  *kgo.Client
	block   time.Duration
	unacked int // batches handed out and not committed
}

// NewSource returns a source; it joins the group at the first Read. opts
// are passed to the client after agora's own (tests shorten the session
// timeout with them).
func NewSource(cfg SourceConfig, opts ...kgo.Opt) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Source{cfg: cfg, opts: opts, block: DefaultBlock}
	if cfg.Block > 0 {
		s.block = time.Duration(cfg.Block)
	}
	s.key = strings.Join([]string{strings.Join(cfg.Brokers, ","), strings.Join(cfg.topics(), ","), cfg.Group, cfg.Start}, "\x00")
	return s, nil
}

// Name is "kafka(TOPICS)".
func (s *Source) Name() string { return "kafka(" + strings.Join(s.cfg.topics(), ",") + ")" }

// Type is "kafka".
func (s *Source) Type() string { return "kafka" }

// idle holds the clients of runs that ended with every batch committed,
// by configuration, for the next run of the same pipeline.
var idle = struct {
	sync.Mutex
	m map[string]*kgo.Client
}{m: map[string]*kgo.Client{}}

func (s *Source) connect() error {
	idle.Lock()
	c := idle.m[s.key]
	delete(idle.m, s.key)
	idle.Unlock()
	if c != nil {
		s.client = c
		return nil
	}
	reset := kgo.NewOffset().AtStart()
	if s.cfg.Start == StartLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(s.cfg.Brokers...),
		kgo.ConsumerGroup(s.cfg.Group),
		kgo.ConsumeTopics(s.cfg.topics()...),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		// Partitions stay with this member from a poll to its commit.
		kgo.BlockRebalanceOnPoll(),
	}, s.opts...)
	c, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("etl: kafka: %w", err)
	}
	s.client = c
	return nil
}

// Read polls at most max records, waiting up to Block; an empty batch when
// none came (the run ends) or a graceful shutdown began.
func (s *Source) Read(ctx context.Context, max int) (etl.Batch, error) {
	if s.client == nil {
		if err := s.connect(); err != nil {
			return etl.Batch{}, err
		}
	}
	pctx, cancel := context.WithTimeout(ctx, s.block)
	defer cancel()
	if ch := runtime.ShutdownRequested(ctx); ch != nil {
		go func() {
			select {
			case <-ch:
				cancel()
			case <-pctx.Done():
			}
		}()
	}
	fetches := s.client.PollRecords(pctx, max)
	if err := ctx.Err(); err != nil {
		s.client.AllowRebalance()
		return etl.Batch{}, err
	}
	var errs []error
	fetches.EachError(func(topic string, partition int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		errs = append(errs, fmt.Errorf("%s[%d]: %w", topic, partition, err))
	})
	if fetches.IsClientClosed() {
		errs = append(errs, kgo.ErrClientClosed)
	}
	recs := fetches.Records()
	if len(errs) > 0 && len(recs) == 0 {
		s.client.AllowRebalance()
		return etl.Batch{}, fmt.Errorf("etl: kafka %s: %w", s.Name(), errors.Join(errs...))
	}
	if len(recs) == 0 {
		s.client.AllowRebalance()
		return etl.Batch{}, nil
	}
	out := make([]etl.Record, len(recs))
	for i, r := range recs {
		out[i] = s.record(r)
	}
	s.unacked++
	client := s.client
	return etl.Batch{Records: out, Ack: func(ctx context.Context) error {
		err := client.CommitRecords(ctx, recs...)
		client.AllowRebalance()
		if err != nil {
			return fmt.Errorf("etl: kafka %s: committing offsets: %w", s.Name(), err)
		}
		s.unacked--
		return nil
	}}, nil
}

// record turns one message into a record.
func (s *Source) record(r *kgo.Record) etl.Record {
	var rec etl.Record
	dec := json.NewDecoder(bytes.NewReader(r.Value))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil || rec == nil || dec.More() {
		rec = etl.Record{"value": string(r.Value)}
	}
	if s.cfg.KeyField != "" {
		rec[s.cfg.KeyField] = string(r.Key)
	}
	return rec
}

// Close keeps the client for the next run when every batch was committed,
// and otherwise closes it, leaving the group, so the uncommitted records
// are fetched again from the committed offsets.
func (s *Source) Close() error {
	c := s.client
	if c == nil {
		return nil
	}
	s.client = nil
	if s.unacked == 0 {
		idle.Lock()
		if _, taken := idle.m[s.key]; !taken {
			idle.m[s.key] = c
			c = nil
		}
		idle.Unlock()
	}
	if c != nil {
		c.Close()
	}
	return nil
}

// CloseIdle closes the clients kept between runs (a worker stopping), and
// reports how many there were.
func CloseIdle() int {
	idle.Lock()
	cs := slices.Collect(func(yield func(*kgo.Client) bool) {
		for _, c := range idle.m {
			if !yield(c) {
				return
			}
		}
	})
	clear(idle.m)
	idle.Unlock()
	for _, c := range cs {
		c.Close()
	}
	return len(cs)
}
