// Package quorum is runtime/distributed's Redlock lease backend: the
// leases of a pipeline live on a majority of independent Redis masters,
// the quorum nodes, while the coordinator's primary Redis mints the fencing
// tokens. The coordinator reaches it through New (Settings, filled from its
// Options, and Primary, what it asks of the primary) and the methods of
// Backend; the node scripts are in internal/leasebackend.
//
// With RedlockRedisURLs set, a lease lives on a majority of independent
// Redis masters (the quorum nodes) while the primary keeps what must have a
// single authority: the worker registry, the fencing counter, the completed
// slots and Once markers.
//
// Acquire reserves the token on the primary with the single-node acquire
// script — slot rule, Once marker, token minted by the same monotonic rules
// — and then sets the lease, with that token, on every quorum node at once.
// It holds only when a majority accepted within the validity window.
//
// The script also leaves a short reservation on the primary (twice the
// per-node timeout): while one worker's acquisition is on its way to the
// nodes, another worker asking at the same moment is told the lease is held.
// Replicas firing the same cron slot together therefore never split the
// nodes' votes between them and leave the slot unrun. The reservation is not
// renewed, and a release gives it back off the critical path: exclusivity
// rests on the quorum alone, so a held lease needs no primary.
//
// Completed slots are recorded on the primary (authoritative, kept) and, for
// 2×LeaseTTL, on the quorum nodes: an acquisition that passed the primary's
// check just before another worker's completion was recorded there meets the
// copy on the nodes it needs. Any acquisition reaches its nodes within one
// validity window of its reservation, so 2×LeaseTTL is ample.
//
// Each node also keeps the largest token released on it (2×LeaseTTL) and
// refuses that one and smaller ones, so a worker that stalled between
// reserving a token and reaching the nodes cannot come back as a holder with
// an older token, and an acquire request overtaken by its own release cannot
// leave a lease behind.
package quorum
