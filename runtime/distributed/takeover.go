package distributed

import "time"

// Takeover of a dead worker's leases
//
// A worker that dies holding a lease would keep its pipeline idle for the
// rest of the lease TTL (300 s by default). The registry knows sooner: a
// worker's record (worker:<id>) expires 3×HeartbeatInterval after its last
// refresh. The acquire script lets a contender take over a lease whose
// holder's record is gone, atomically with the check, minting a new
// fencing token as for any grant. Two rules make that safe:
//
//   - The holder refreshes its record in every renewal round, just before
//     renewing its leases (one pipeline: Redis runs them in order), and at
//     a grant unless a write of the record went through within the last
//     heartbeat interval (the acquire script then extends it, and refuses
//     to grant while it is missing). A lease counts as held only until
//     recordGiveUp after the send of the last record write that a
//     successful renewal of that lease confirmed (or, for a new lease, of
//     the write before the grant, or of the grant itself), measured on the
//     worker's monotonic clock; past that it is given up locally, as at the
//     renewal deadline, and the run's context is cancelled.
//   - Redis starts the record's expiry when it runs the refresh, which is
//     after the send, and counts it on its own clock. recordGiveUp is
//     recordTTL less recordMargin: 1 % of recordTTL for the two clocks
//     running at different rates (NTP-disciplined clocks differ by far
//     less than 0.1 %) plus 5 ms for the millisecond rounding of expiries.
//     So the holder has stopped before the record can expire, and a
//     contender that finds the record gone finds a holder that no longer
//     considers its lease valid.
//
// Assumptions, beside those of the lease TTL: the Redis server's clock does
// not jump forward by more than the margin (Redis expires keys by its wall
// clock; a step of a second would expire a record early), and the holder's
// process is not paused past the deadline between checking its lease and
// acting on it — the same window the lease TTL has, which fencing tokens
// close: a resumed holder's token is below the new holder's.
//
// With the default 30 s heartbeat a dead worker's pipelines move after at
// most 90 s plus one retry (Continuous pipelines ask every second), instead
// of the lease TTL; with a 1 s heartbeat after at most 4 s. A worker that
// stops cleanly releases its leases at once.
//
// Quorum (Redlock) leases and clients whose keys span Cluster slots keep to
// the lease TTL: the check reads the holder's record from inside the
// script, which works only when one server holds both keys.

// recordMargin is the part of the record TTL a worker keeps between giving
// its leases up and the earliest moment Redis can expire its record.
func recordMargin(recordTTL time.Duration) time.Duration {
	// Heartbeats of a few milliseconds are for tests; never give up sooner
	// than half the record's life.
	return min(recordTTL/100+5*time.Millisecond, recordTTL/2)
}
