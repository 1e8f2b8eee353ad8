package etl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/agora-etl/agora/etl"
)

// events records the order of what the pipeline did.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, args ...any) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}

// memSink keeps what it is given. reject decides per record whether to
// refuse it; fail, when set, fails every Write.
type memSink struct {
	name      string
	ev        *events
	reject    func(etl.Record) error
	fail      error
	failFlush error
	mu        sync.Mutex
	got       []etl.Record
	flushes   int
	closed    int
}

func (s *memSink) Name() string { return s.name }

func (s *memSink) Write(ctx context.Context, records []etl.Record) error {
	s.ev.add("write %s %d", s.name, len(records))
	if s.fail != nil {
		return s.fail
	}
	var rej []etl.Rejection
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range records {
		if s.reject != nil {
			if err := s.reject(r); err != nil {
				rej = append(rej, etl.Rejection{Index: i, Err: err})
				continue
			}
		}
		s.got = append(s.got, r)
	}
	if rej != nil {
		return &etl.RejectedError{Rejections: rej}
	}
	return nil
}

func (s *memSink) Flush(ctx context.Context) error {
	s.ev.add("flush %s", s.name)
	s.mu.Lock()
	s.flushes++
	s.mu.Unlock()
	return s.failFlush
}

func (s *memSink) Close() error {
	s.ev.add("close %s", s.name)
	s.closed++
	return nil
}

func (s *memSink) records() []etl.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]etl.Record(nil), s.got...)
}

// ackSource hands out n records {"id": i} in batches and records which
// batches were acknowledged. Read calls hook, when set, before each batch.
type ackSource struct {
	n       int
	next    int
	ev      *events
	hook    func(batch int)
	batches int
	acked   []int // batch numbers
	closed  int
	noAck   bool
}

func (s *ackSource) Read(ctx context.Context, max int) (etl.Batch, error) {
	if err := ctx.Err(); err != nil {
		return etl.Batch{}, err
	}
	if s.next >= s.n {
		return etl.Batch{}, io.EOF
	}
	if s.hook != nil {
		s.hook(s.batches)
	}
	var recs []etl.Record
	for ; s.next < s.n && len(recs) < max; s.next++ {
		recs = append(recs, etl.Record{"id": s.next})
	}
	b := s.batches
	s.batches++
	s.ev.add("read %d", len(recs))
	if s.noAck {
		return etl.Batch{Records: recs}, nil
	}
	return etl.Batch{Records: recs, Ack: func(context.Context) error {
		s.ev.add("ack %d", b)
		s.acked = append(s.acked, b)
		return nil
	}}, nil
}

func (s *ackSource) Close() error { s.closed++; return nil }

var errDown = errors.New("connection refused")

// rejectOdd refuses records with an odd id.
func rejectOdd(r etl.Record) error {
	if id := r["id"].(int); id%2 == 1 {
		return fmt.Errorf("id %d is odd", id)
	}
	return nil
}
