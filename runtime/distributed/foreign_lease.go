package distributed

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// dataProblems holds, per pipeline, why its last acquire found its lease or
// token key holding data agora did not write (the acquire script's -5), and
// how many acquires were refused so. A pipeline's problem is cleared by its
// next acquire that the script could decide.
type dataProblems struct {
	n      atomic.Int32 // len(msg): the fast path of a healthy fleet
	mu     sync.Mutex
	msg    map[string]string
	counts map[string]uint64
}

// noteForeignData records that pipelineID's acquire was refused for data
// agora did not write, warns once naming its keys, and returns the error
// TryAcquireLease answers: the pipeline runs nowhere until an operator
// fixes the key, and says so in /status, /readyz and the metrics.
func (c *RedisWorkerCoordinator) noteForeignData(pipelineID string) error {
	lease, token, bf := c.keys.lease(pipelineID), c.keys.token(pipelineID), c.keys.backfill(pipelineID)
	err := fmt.Errorf("distributed: acquire lease of %q: %w: its lease key %s, token key %s or backfill hash %s holds a value of another type or one that does not parse (a token has at most 16 digits); nothing was granted or written; inspect them and delete the one that is wrong",
		pipelineID, ErrForeignData, lease, token, bf)
	c.warnForeign(token, "the acquire script refused pipeline "+strconv.Quote(pipelineID)+": its lease ("+lease+"), token or backfill key is not agora's")
	p := &c.problems
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.msg == nil {
		p.msg, p.counts = map[string]string{}, map[string]uint64{}
	}
	p.msg[pipelineID] = err.Error()
	p.counts[pipelineID]++
	p.n.Store(int32(len(p.msg)))
	return err
}

// clearForeignData forgets pipelineID's problem after an acquire the script
// decided.
func (c *RedisWorkerCoordinator) clearForeignData(pipelineID string) {
	p := &c.problems
	if p.n.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.msg, pipelineID)
	p.n.Store(int32(len(p.msg)))
}

// pipelineProblems returns the pipelines' current problems, by id, or nil.
func (c *RedisWorkerCoordinator) pipelineProblems() map[string]string {
	p := &c.problems
	if p.n.Load() == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.msg))
	for id, m := range p.msg {
		out[id] = m
	}
	return out
}

// foreignDataCounts returns the acquires refused for foreign data, by
// pipeline id.
func (c *RedisWorkerCoordinator) foreignDataCounts() map[string]uint64 {
	p := &c.problems
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]uint64, len(p.counts))
	for id, n := range p.counts {
		out[id] = n
	}
	return out
}

// problemsErr is Healthy's answer while some pipeline has a problem: the
// replica is reachable, but those pipelines cannot run.
func (c *RedisWorkerCoordinator) problemsErr() error {
	probs := c.pipelineProblems()
	if len(probs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(probs))
	for id := range probs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	msgs := make([]string, len(ids))
	for i, id := range ids {
		msgs[i] = "pipeline " + strconv.Quote(id) + ": " + probs[id]
	}
	return fmt.Errorf("%w: %s", ErrForeignData, strings.Join(msgs, "; "))
}
