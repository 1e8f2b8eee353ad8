package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
)

// Sink produces every record, as a JSON object (keys sorted), to one
// topic; see the package doc. It is used by one goroutine at a time.
type Sink struct {
	cfg     SinkConfig
	cl      *kgo.Client
	enc     encoder
	recs    []kgo.Record // this batch's messages; kgo holds pointers into it until Write returns
	idx     []int        // idx[i]: the batch index of recs[i]
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []produceError // what the promises reported
	promise func(*kgo.Record, error)
}

// produceError is a message the brokers did not take.
type produceError struct {
	rec *kgo.Record
	err error
}

// NewSink returns a sink; it connects at the first Write. opts are added
// to the client's options (TLS, SASL); the producer is idempotent and
// waits for every in-sync replica unless opts say otherwise.
func NewSink(cfg SinkConfig, opts ...kgo.Opt) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fail("sink", cfg.Topic, cfg.Brokers, "creating the client", err)
	}
	sink := &Sink{cfg: cfg, cl: cl}
	sink.promise = func(r *kgo.Record, err error) {
		if err != nil {
			sink.mu.Lock()
			sink.errs = append(sink.errs, produceError{r, err})
			sink.mu.Unlock()
		}
		sink.wg.Done()
	}
	return sink, nil
}

// Name is "kafka(TOPIC)".
func (s *Sink) Name() string { return "kafka(" + s.cfg.Topic + ")" }

// Type is "kafka".
func (s *Sink) Type() string { return "kafka" }

// Write produces records and returns once the broker has every one of
// them. A record JSON cannot encode, one without its key field, and one
// the broker finds too large are rejected; any other error fails the
// batch.
func (s *Sink) Write(ctx context.Context, records []etl.Record) error {
	var rejections []etl.Rejection
	s.recs, s.idx = s.recs[:0], s.idx[:0]
	s.enc.reset() // the last batch's values are produced: Write waited for them
	for i, rec := range records {
		value, err := s.enc.value(rec)
		var key []byte
		if err == nil && s.cfg.Key != "" {
			key, err = s.enc.key(s.cfg.Key, rec)
		}
		if err != nil {
			rejections = append(rejections, etl.Rejection{Index: i, Err: err})
			continue
		}
		s.recs = append(s.recs, kgo.Record{Key: key, Value: value})
		s.idx = append(s.idx, i)
	}
	if rejections != nil && etl.RejectsFailRun(ctx) {
		// The run fails on these: nothing of the batch is produced. (A
		// message the broker refuses once produced, too large, cannot be
		// taken back from the others.)
		clear(s.recs)
		return &etl.RejectedError{Rejections: rejections}
	}
	if len(s.recs) > 0 {
		if err := ctx.Err(); err != nil {
			// The run ended (its timeout): nothing more is produced.
			return fmt.Errorf("kafka: not producing %d messages: %w", len(s.recs), err)
		}
		s.wg.Add(len(s.recs))
		for i := range s.recs {
			s.cl.Produce(ctx, &s.recs[i], s.promise)
		}
		// Flush sends what lingers now rather than after the linger.
		ferr := s.cl.Flush(ctx)
		s.wg.Wait()
		var failed []error
		for _, pe := range s.errs {
			switch err := pe.err; {
			case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge), errors.Is(err, kerr.InvalidRecord):
				rejections = append(rejections, etl.Rejection{Index: s.idx[s.position(pe.rec)], Err: err})
			default:
				failed = append(failed, err)
			}
		}
		clear(s.errs)
		s.errs = s.errs[:0]
		n := len(s.recs)
		clear(s.recs)
		if len(failed) > 0 {
			return fail("sink", s.cfg.Topic, s.cfg.Brokers, "producing "+strconv.Itoa(len(failed))+" of "+strconv.Itoa(n)+" records", failed[0])
		}
		if ferr != nil {
			return fail("sink", s.cfg.Topic, s.cfg.Brokers, "flushing", ferr)
		}
		if rejections != nil {
			slices.SortFunc(rejections, func(a, b etl.Rejection) int { return a.Index - b.Index })
		}
	}
	if rejections != nil {
		return &etl.RejectedError{Rejections: rejections}
	}
	return nil
}

// position returns the index of r in s.recs.
func (s *Sink) position(r *kgo.Record) int {
	for i := range s.recs {
		if &s.recs[i] == r {
			return i
		}
	}
	panic("kafka: a promise for a record of no batch")
}

// Close waits for anything still being produced and closes the client.
func (s *Sink) Close() error {
	s.cl.Close()
	return nil
}
