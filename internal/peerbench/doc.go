// Package peerbench holds the benchmarks that measure agora's Redis
// coordinator beside its peers: bsm/redislock, go-redsync's Redlock,
// gocron v2 with a distributed locker, and the least any implementation
// must do (the floors). It is a module of its own so that those peers are
// requirements of the benchmarks, never of the agora module: a worker's
// go.mod does not list them. It has no API; run it with
// go test -run '^$' -bench . ./internal/peerbench (from the repository's
// workspace).
package peerbench
