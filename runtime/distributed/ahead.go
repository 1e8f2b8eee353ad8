package distributed

import (
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Lease-ahead
//
// The pool asks for a cron slot's lease up to MaxLeaseAhead before the slot
// (runtime.LeaseAheader), in the same batched acquire script call as any
// other request, with the request's run number marked "a". Every rule of a
// request at the boundary holds for it; three more keep the state epoch
// sound, since a grant can now be issued before its slot begins:
//
//   - The script grants an "a" request only from MaxLeaseAhead before its
//     slot by the Redis server's clock (TIME, read for the grant anyway);
//     earlier, it decides nothing (outcomeAskAtSlot) and the worker asks
//     again at the boundary. So every grant of slot s is issued at a Redis
//     time of at least s − MaxLeaseAhead, whatever the worker's clock says.
//   - A slot is refused as possibly done (ErrStateLost) when
//     s − MaxLeaseAhead < epoch, not only when s < epoch: a grant issued
//     before a loss of state is lost with it, and the epoch then set, at a
//     Redis time after that grant, may still be before s. This refuses,
//     after a loss, also the slot that begins within MaxLeaseAhead of it.
//   - A lease is taken over only when its holder's record is gone, early or
//     not: an early grant within its TTL is never taken over while its
//     holder lives, and its TTL and renewal deadline count from the grant.
//
// An "a" request that finds the lease held for an earlier run (the previous
// slot still running) decides nothing either; one that finds it held for
// this slot or a later one is refused as at the boundary. A worker that is
// not the pipeline's preferred worker looks ahead only: one MGET of the
// token keys says whether the slot was granted elsewhere (refused as held),
// and EXISTS of the preferred workers' records, in the same round trip,
// whether to ask at the boundary (the record is gone: ErrAskAtSlot) or
// deferredAskDelay after it as without lease-ahead (errPreferredLives), so
// that a loaded fleet's slow preferred workers are not raced. Lease-ahead
// needs the single-server or Cluster backend; in Redlock mode, and for
// pipelines that re-run interrupted slots, every request is asked at the
// boundary.

// MaxLeaseAhead is the longest time before its slot that a lease is
// granted: the acquire script's lead
// (internal/leasebackend/lua/acquire.lua), which a test keeps equal to
// this.
const MaxLeaseAhead = runtime.MaxLeaseAhead

var _ runtime.LeaseAheader = (*RedisWorkerCoordinator)(nil)

// LeaseAhead is MaxLeaseAhead on one Redis, Sentinel or a Cluster, and 0 in
// Redlock mode, whose scripts keep to the boundary.
func (c *RedisWorkerCoordinator) LeaseAhead() time.Duration {
	if _, ok := c.backend.(*singleBackend); !ok || c.noAhead {
		return 0
	}
	return MaxLeaseAhead
}

// aheadOnlyLooks answers the Ahead requests among reqs that another worker
// is preferred for and that grantedElsewhere neither found granted nor
// found the preferred worker's record gone for: they decide nothing before
// the boundary, and are asked for then as without lease-ahead
// (errPreferredLives; deferredAskDelay late). The rest are returned, to go
// to the script.
func (c *RedisWorkerCoordinator) aheadOnlyLooks(reqs []leaseRequest, at []int, out []runtime.LeaseReply) ([]leaseRequest, []int) {
	keptReqs, keptAt := reqs[:0:0], at[:0:0]
	for i, req := range reqs {
		if req.Ahead && c.notPreferred(req.PipelineID) {
			out[at[i]] = runtime.LeaseReply{Err: errPreferredLives}
			continue
		}
		keptReqs, keptAt = append(keptReqs, req), append(keptAt, at[i])
	}
	return keptReqs, keptAt
}
