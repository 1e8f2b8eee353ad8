package ui

import (
	"context"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime/distributed"
)

// DefaultSummaryTTL is how long the dashboard reuses the fleet's summaries
// (Options.SummaryTTL): however many tabs are open and however often they
// reload, the front page and /api/pipelines read Redis at most once per
// TTL, and concurrent readers share one read. The page says when its data
// was read.
const DefaultSummaryTTL = 2 * time.Second

// summaries holds the last distributed.Inspector.Summaries read.
type summaries struct {
	in  *distributed.Inspector
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	at      time.Time
	val     distributed.Overview
	err     error         // the last read's
	loading chan struct{} // closed when the read in flight ends
}

// get returns the summaries. Fresh ones (younger than the TTL) are
// returned as they are; older ones are returned too while one read
// refreshes them in the background (so no reader waits on Redis once the
// first read is done); only the first call waits for a read. Concurrent
// callers share one read, and a failed read is not kept: the summaries
// already read are served until a read succeeds, and with none every
// caller gets the error.
func (s *summaries) get(ctx context.Context) (distributed.Overview, time.Time, error) {
	s.mu.Lock()
	have := !s.at.IsZero()
	if have && s.now().Sub(s.at) < s.ttl {
		v, at := s.val, s.at
		s.mu.Unlock()
		return v, at, nil
	}
	wait := s.loading
	if wait == nil {
		wait = make(chan struct{})
		s.loading = wait
		go s.read(ctx, wait)
	}
	if have {
		v, at := s.val, s.at
		s.mu.Unlock()
		return v, at, nil
	}
	s.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return distributed.Overview{}, time.Time{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		return distributed.Overview{}, time.Time{}, s.err
	}
	return s.val, s.at, nil
}

// read reads the summaries and closes done. The read is the fleet's, not
// the request's that started it: a reader that leaves does not fail the
// others.
func (s *summaries) read(ctx context.Context, done chan struct{}) {
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	v, err := s.in.Summaries(readCtx)
	cancel()
	s.mu.Lock()
	if err == nil {
		s.val, s.at = v, s.now()
	}
	s.err, s.loading = err, nil
	s.mu.Unlock()
	close(done)
}
