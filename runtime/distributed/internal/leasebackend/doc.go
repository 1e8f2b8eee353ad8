// Package leasebackend holds what runtime/distributed's lease backends
// (one Redis, Redis Cluster, Redlock quorum) are built from, apart from the
// coordinator itself:
//
//   - the Lua scripts (lua/*.lua, embedded) and the way they are sent:
//     EVALSHA, EVAL after NOSCRIPT, several in one pipelined round trip,
//     SCRIPT LOAD ahead of the first request (scripts.go,
//     quorum_scripts.go);
//   - the Redis Cluster hash slot of a key, by which a burst's acquire
//     calls are grouped (hashslot.go);
//   - the per-pipeline key cache (keycache.go) and the goroutine pool of
//     the quorum fan-outs (tasks.go);
//   - the fencing token of a stored lease value, on the primary or on a
//     quorum node (leasetoken.go).
//
// The backends themselves are the coordinator's single-node backend
// (runtime/distributed/single.go) and the Redlock quorum backend
// (runtime/distributed/internal/quorum).
//
// Every script touches the keys of one pipeline only, which share a {hash
// tag}, so on a Cluster each runs on the master of that tag's slot.
package leasebackend
