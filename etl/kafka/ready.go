package kafka

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readiness tells when a new consumer client can have records: the group
// assigned it no partition (nothing will come), or a first record is
// buffered, or a second fetch answer came (the client fetches again from a
// broker only once it handled the last answer, so the first one was
// empty: the partitions had nothing for the broker's fetch wait). Until
// then a read's block time does not start.
type readiness struct {
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	some    bool // partitions were assigned
	answers int  // fetch answers read
}

func newReadiness() *readiness { return &readiness{done: make(chan struct{})} }

func (r *readiness) ready() { r.once.Do(func() { close(r.done) }) }

// assigned is the OnPartitionsAssigned callback.
func (r *readiness) assigned(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	some := false
	for _, ps := range parts {
		some = some || len(ps) > 0
	}
	r.mu.Lock()
	r.some = r.some || some
	r.mu.Unlock()
	if !some {
		r.ready()
	}
}

// OnBrokerRead is the hook that counts fetch answers.
func (r *readiness) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != int16(kmsg.Fetch) || err != nil {
		return
	}
	r.mu.Lock()
	r.answers++
	second := r.some && r.answers >= 2
	r.mu.Unlock()
	if second {
		r.ready()
	}
}

// OnFetchRecordBuffered is the hook that sees the first record.
func (r *readiness) OnFetchRecordBuffered(*kgo.Record) { r.ready() }
