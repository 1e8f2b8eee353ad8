package ui

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/clocktest"
)

func TestSummariesAreSharedAndRefreshedInTheBackground(t *testing.T) {
	f := newFixture(t)
	clock := clocktest.NewFake(now)
	s := &summaries{in: f.in, ttl: 2 * time.Second, now: clock.Now}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, at, err := s.get(ctx); err != nil || !at.Equal(now) {
				t.Errorf("first get: %v at %v", err, at)
			}
		})
	}
	wg.Wait()
	clock.Advance(time.Second)
	if _, at, _ := s.get(ctx); !at.Equal(now) {
		t.Errorf("within the TTL the summaries were read again (at %v)", at)
	}
	// Past the TTL the old summaries answer at once while one read
	// refreshes them.
	clock.Advance(2 * time.Second)
	if _, at, err := s.get(ctx); err != nil || !at.Equal(now) {
		t.Errorf("past the TTL: %v at %v, want the old ones", err, at)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, at, _ := s.get(ctx); at.Equal(now.Add(3 * time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background read never refreshed the summaries")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSummariesReadFailingWithNoneKeptIsAnError(t *testing.T) {
	f := newFixture(t)
	_ = f.in.Close()
	s := &summaries{in: f.in, ttl: time.Second, now: time.Now}
	if _, _, err := s.get(context.Background()); err == nil {
		t.Error("get over a closed inspector did not fail")
	}
}
