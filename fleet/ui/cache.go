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
// TTL, and concurrent readers share one read.
const DefaultSummaryTTL = 2 * time.Second

// summaries holds the last distributed.Inspector.Summaries read.
type summaries struct {
	in  *distributed.Inspector
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	at      time.Time
	val     distributed.Overview
	loading chan struct{} // closed when the read in flight ends
}

// get returns summaries no older than the TTL, reading them when needed;
// a read in flight is waited for rather than repeated. A failed read is
// not kept.
func (s *summaries) get(ctx context.Context) (distributed.Overview, time.Time, error) {
	for {
		s.mu.Lock()
		if !s.at.IsZero() && s.now().Sub(s.at) < s.ttl {
			v, at := s.val, s.at
			s.mu.Unlock()
			return v, at, nil
		}
		if wait := s.loading; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return distributed.Overview{}, time.Time{}, ctx.Err()
			}
		}
		done := make(chan struct{})
		s.loading = done
		s.mu.Unlock()

		// The read is the fleet's, not this request's: a reader that
		// leaves does not fail the others waiting on it.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		v, err := s.in.Summaries(readCtx)
		cancel()
		s.mu.Lock()
		s.loading = nil
		if err == nil {
			s.val, s.at = v, s.now()
		}
		at := s.at
		s.mu.Unlock()
		close(done)
		return v, at, err
	}
}
