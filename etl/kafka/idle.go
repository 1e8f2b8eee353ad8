package kafka

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// IdleClose is how long a consumer client kept between runs waits for the
// next run of its configuration before it is closed (and leaves the group).
const IdleClose = time.Minute

// idle holds the consumer clients of runs that ended with every batch
// acknowledged, by configuration, for the next run to take: a continuous
// schedule runs its pipeline again at once, and rejoining the group every
// run would rebalance it every time.
var idle struct {
	mu      sync.Mutex
	clients map[string][]*idleClient
	after   time.Duration // IdleClose; tests shorten it
}

type idleClient struct {
	cl    *kgo.Client
	timer *time.Timer
}

// takeIdle returns a kept client for key, or nil.
func takeIdle(key string) *kgo.Client {
	idle.mu.Lock()
	defer idle.mu.Unlock()
	list := idle.clients[key]
	for len(list) > 0 {
		c := list[len(list)-1]
		list = list[:len(list)-1]
		idle.clients[key] = list
		if c.timer.Stop() {
			return c.cl
		}
		// Its timer fired and is closing it.
	}
	return nil
}

// putIdle keeps cl for the next run with key; it is closed after
// IdleClose unless taken.
func putIdle(key string, cl *kgo.Client) {
	idle.mu.Lock()
	defer idle.mu.Unlock()
	if idle.clients == nil {
		idle.clients = map[string][]*idleClient{}
	}
	after := idle.after
	if after == 0 {
		after = IdleClose
	}
	c := &idleClient{cl: cl}
	c.timer = time.AfterFunc(after, func() {
		idle.mu.Lock()
		list := idle.clients[key]
		for i, o := range list {
			if o == c {
				idle.clients[key] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		idle.mu.Unlock()
		cl.Close()
	})
	idle.clients[key] = append(idle.clients[key], c)
}

// CloseIdle closes every consumer client kept between runs, so each leaves
// its group now instead of after IdleClose. A program that stops reading
// calls it before it exits; the next run of a source then rejoins.
func CloseIdle() {
	idle.mu.Lock()
	var closing []*kgo.Client
	for key, list := range idle.clients {
		for _, c := range list {
			if c.timer.Stop() {
				closing = append(closing, c.cl)
			}
		}
		delete(idle.clients, key)
	}
	idle.mu.Unlock()
	for _, cl := range closing {
		cl.Close()
	}
}
