package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// Preferred workers
//
// When every replica asks for every slot of every pipeline, all but one of
// them ask in vain, and on a busy Redis their requests queue in front of the
// one that matters. So on one Redis (or Sentinel) each worker keeps a view
// of the registry: which live workers run which pipeline. For each pipeline
// one of them, chosen by rendezvous hashing of worker and pipeline ids, is
// the preferred worker: it asks for a slot at once. The others defer their
// request by deferredAskDelay (runtime.LeaseDeferrer) and then look, with
// one MGET of the batch's token keys, whether the slot was granted; only
// if not — the preferred worker died, is paused or is slow — do they ask.
//
// The view only orders requests; the acquire script still decides every
// grant, so a stale or disagreeing view costs time or Redis work, never
// safety: two workers that both think they are preferred both ask, and the
// script grants one; none does, and the slot runs deferredAskDelay late. A
// dead worker stays in the view until its record expires (3 ×
// HeartbeatInterval) and the view is next read; until then its pipelines'
// slots run deferredAskDelay late. A Cluster keeps asking at once with slot
// claims: its token keys lie in different slots and cannot be read in one
// MGET.

// deferredAskDelay is how long a worker that is not a pipeline's preferred
// worker waits before it asks for a slot of it.
const deferredAskDelay = 300 * time.Millisecond

// preferenceRefresh is how often the registry view is read again.
const preferenceRefresh = 5 * time.Second

var _ runtime.LeaseDeferrer = (*RedisWorkerCoordinator)(nil)

// preferenceView maps each pipeline to the live workers that run it.
type preferenceView map[string][]string

// prefers reports whether the view makes workerID pipelineID's preferred
// worker, and whether the view knows another worker runs it at all.
func (v preferenceView) prefers(workerID, pipelineID string) (preferred, known bool) {
	best, known := v.preferred(pipelineID)
	return !known || best == workerID, known
}

// preferred names pipelineID's preferred worker, and whether the view knows
// more than one worker runs it.
func (v preferenceView) preferred(pipelineID string) (string, bool) {
	workers := v[pipelineID]
	if len(workers) < 2 {
		return "", false
	}
	best, bestScore := "", uint64(0)
	for _, w := range workers {
		h := fnv.New64a()
		h.Write([]byte(w))
		h.Write([]byte{0})
		h.Write([]byte(pipelineID))
		if score := mix64(h.Sum64()); best == "" || score > bestScore || (score == bestScore && w < best) {
			best, bestScore = w, score
		}
	}
	return best, true
}

// mix64 spreads an FNV sum's bits over the whole word (the MurmurHash3
// finaliser): FNV alone, on short ids that differ in one byte, leaves the
// high bits, which decide the largest score, nearly equal.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// usesPreference reports whether this coordinator orders requests by
// preferred worker: on one Redis only (see the package comment above).
func (c *RedisWorkerCoordinator) usesPreference() bool {
	b, ok := c.backend.(*singleBackend)
	if !ok {
		return false
	}
	_, cluster := b.client.(*redis.ClusterClient)
	return !cluster
}

// DeferLease asks the pool to send a slot request 300 ms
// (deferredAskDelay) late when another live worker is the pipeline's
// preferred worker.
func (c *RedisWorkerCoordinator) DeferLease(req runtime.LeaseRequest) time.Duration {
	if runtime.RunKindOf(req.RunNumber) != runtime.RunSlot || !c.notPreferred(req.PipelineID) {
		return 0
	}
	return deferredAskDelay
}

// notPreferred reports whether the view names another worker as
// pipelineID's preferred worker: a lookup in the set the last refresh
// worked out, so a burst's requests hash nothing and take no lock.
func (c *RedisWorkerCoordinator) notPreferred(pipelineID string) bool {
	return c.preferredOther(pipelineID) != ""
}

// preferredOther names the other worker the view prefers for pipelineID,
// "" when it is this one or nobody else runs it.
func (c *RedisWorkerCoordinator) preferredOther(pipelineID string) string {
	deferred := c.pref.Load()
	if deferred == nil {
		return ""
	}
	return (*deferred)[pipelineID]
}

// preferenceMember is this worker's entry in the preference index: its id
// and its coordinator instance, so a restarted worker's pipelines are read
// again.
func (c *RedisWorkerCoordinator) preferenceMember() (member, workerID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner, c.workerID
}

// refreshPreference announces this worker in the preference index (a
// sorted set of live coordinator instances, scored by when they expire, so
// reading it costs one command however large the keyspace is), reads the
// index, fetches the pipelines of instances it has not seen yet from their
// worker records, and stores the view. One round trip, plus one for new
// instances.
func (c *RedisWorkerCoordinator) refreshPreference(ctx context.Context) {
	member, self := c.preferenceMember()
	if member == "" {
		return
	}
	ctx, cancel := c.opContext(ctx, opPreference)
	defer cancel()
	now := c.clock.Now().UnixMilli()
	index := c.keys.preferenceIndex()
	var live *redis.StringSliceCmd
	_, err := c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, index, redis.Z{Score: float64(now + c.s.recordTTL.Milliseconds()), Member: member})
		p.ZRemRangeByScore(ctx, index, "-inf", "("+strconv.FormatInt(now, 10))
		live = p.ZRange(ctx, index, 0, -1)
		return nil
	})
	if err != nil {
		return // the view stays as it was; asking is safe either way
	}
	members := live.Val()
	c.prefMu.Lock()
	defer c.prefMu.Unlock()
	var fresh []string
	for _, m := range members {
		if _, ok := c.prefSeen[m]; !ok {
			fresh = append(fresh, m)
		}
	}
	if len(fresh) > 0 {
		cmds := make([]*redis.StringCmd, len(fresh))
		_, _ = c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, m := range fresh {
				cmds[i] = p.HGet(ctx, c.keys.worker(workerOf(m)), "pipelines")
			}
			return nil
		})
		for i, m := range fresh {
			var pipelines []string
			if err := json.Unmarshal([]byte(cmds[i].Val()), &pipelines); err != nil {
				continue // not written yet: read again at the next refresh
			}
			c.prefSeen[m] = pipelines
		}
	}
	keep := make(map[string][]string, len(members))
	view := preferenceView{}
	for _, m := range members {
		pipelines, ok := c.prefSeen[m]
		if !ok {
			continue
		}
		keep[m] = pipelines
		for _, p := range pipelines {
			view[p] = append(view[p], workerOf(m))
		}
	}
	c.prefSeen = keep
	deferred := map[string]string{}
	for p := range view {
		if best, known := view.preferred(p); known && best != self {
			deferred[p] = best
		}
	}
	c.pref.Store(&deferred)
}

// leavePreference takes this worker out of the preference index at Stop,
// so the others ask at once for its pipelines' slots.
func (c *RedisWorkerCoordinator) leavePreference(ctx context.Context) {
	if !c.usesPreference() {
		return
	}
	member, _ := c.preferenceMember()
	if member != "" {
		_ = c.client.ZRem(ctx, c.keys.preferenceIndex(), member).Err()
	}
}

// preferenceLoop refreshes the view every preferenceRefresh, and every
// second for the first five times: workers started together see each
// other within seconds, not at the first regular refresh.
func (c *RedisWorkerCoordinator) preferenceLoop(stop <-chan struct{}) {
	defer c.loops.Done()
	fast := 6
	everyRealTime(stop, func() time.Duration {
		if fast--; fast > 0 {
			return time.Second
		}
		return preferenceRefresh
	}, func() { c.refreshPreference(context.Background()) })
}

// grantedElsewhere splits reqs, slot requests of pipelines another worker
// is preferred for, by one MGET of their token keys: those whose slot (or a
// later one) was already granted are answered as held in out; the rest are
// returned, to be asked for.
func (c *RedisWorkerCoordinator) grantedElsewhere(ctx context.Context, reqs []leaseRequest, at []int, out []runtime.LeaseReply) ([]leaseRequest, []int) {
	var look []int
	for i, req := range reqs {
		if req.slot() && c.notPreferred(req.PipelineID) {
			look = append(look, i)
		}
	}
	if len(look) == 0 {
		return reqs, at
	}
	keys := make([]string, len(look))
	var preferred []string // of the Ahead requests, to learn which live
	for j, i := range look {
		keys[j] = c.keys.token(reqs[i].PipelineID)
		if reqs[i].Ahead {
			if w := c.preferredOther(reqs[i].PipelineID); !slices.Contains(preferred, w) {
				preferred = append(preferred, w)
			}
		}
	}
	var mget *redis.SliceCmd
	records := make([]*redis.IntCmd, len(preferred))
	_, _ = c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		mget = p.MGet(ctx, keys...)
		for i, w := range preferred {
			records[i] = p.Exists(ctx, c.keys.worker(w))
		}
		return nil
	})
	vals, err := mget.Result()
	if err != nil || len(vals) != len(keys) {
		return reqs, at // the script decides (Ahead ones: aheadOnlyLooks)
	}
	dead := map[string]bool{}
	for i, w := range preferred {
		if n, err := records[i].Result(); err == nil && n == 0 {
			dead[w] = true
		}
	}
	granted := make([]bool, len(reqs))
	for j, i := range look {
		if s, ok := vals[j].(string); ok {
			if _, run := parseTokenRecord(s); run >= reqs[i].Mode {
				granted[i] = true
			}
		}
	}
	keptReqs, keptAt := reqs[:0:0], at[:0:0]
	for i, req := range reqs {
		switch {
		case granted[i]:
			c.stats.contended.Add(1)
			out[at[i]] = runtime.LeaseReply{}
			continue
		case req.Ahead && c.notPreferred(req.PipelineID) && dead[c.preferredOther(req.PipelineID)]:
			// Not granted, and the preferred worker's record is gone: ask
			// at the boundary, without waiting for it.
			out[at[i]] = runtime.LeaseReply{Err: runtime.ErrAskAtSlot}
			continue
		}
		keptReqs, keptAt = append(keptReqs, req), append(keptAt, at[i])
	}
	return keptReqs, keptAt
}

// errPreferredLives answers an Ahead request that another worker is
// preferred for, not granted yet while that worker's record lives: the pool
// asks at the boundary as without lease-ahead, deferredAskDelay late.
var errPreferredLives = errors.New("distributed: the preferred worker lives and has not been granted the slot yet; ask deferredAskDelay after the slot")
