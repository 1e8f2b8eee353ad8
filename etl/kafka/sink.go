package kafka

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
)

// Sink produces every record, as a JSON object (keys sorted), to one
// topic; see the package doc. It is used by one goroutine at a time.
type Sink struct {
	cfg  SinkConfig
	cl   *kgo.Client
	enc  encoder
	recs []*kgo.Record
	idx  []int // idx[i]: the batch index of recs[i]
	errs []error
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
	return &Sink{cfg: cfg, cl: cl}, nil
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
		s.recs = append(s.recs, &kgo.Record{Key: key, Value: value})
		s.idx = append(s.idx, i)
	}
	if len(s.recs) > 0 {
		if cap(s.errs) < len(s.recs) {
			s.errs = make([]error, len(s.recs))
		}
		s.errs = s.errs[:len(s.recs)]
		var wg sync.WaitGroup
		wg.Add(len(s.recs))
		for i, r := range s.recs {
			s.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				s.errs[i] = err
				wg.Done()
			})
		}
		// Flush sends what lingers now rather than after the linger.
		ferr := s.cl.Flush(ctx)
		wg.Wait()
		var failed []error
		for i, err := range s.errs {
			switch {
			case err == nil:
			case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge), errors.Is(err, kerr.InvalidRecord):
				rejections = append(rejections, etl.Rejection{Index: s.idx[i], Err: err})
			default:
				failed = append(failed, err)
			}
			s.errs[i] = nil
		}
		clear(s.recs)
		if len(failed) > 0 {
			return fail("sink", s.cfg.Topic, s.cfg.Brokers, "producing "+itoa(len(failed))+" of "+itoa(len(s.recs))+" records", failed[0])
		}
		if ferr != nil {
			return fail("sink", s.cfg.Topic, s.cfg.Brokers, "flushing", ferr)
		}
	}
	if rejections != nil {
		return &etl.RejectedError{Rejections: rejections}
	}
	return nil
}

// Close waits for anything still being produced and closes the client.
func (s *Sink) Close() error {
	s.cl.Close()
	return nil
}
