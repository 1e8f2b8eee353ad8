package redisurl

import "github.com/redis/go-redis/v9"

// NewClient returns the go-redis client the URL's topology calls for, with
// go-redis's defaults: a Client for one server, a ClusterClient for a Redis
// Cluster (each command goes to the master of its key's hash slot), a
// failover Client for Sentinel (it asks the Sentinels for the primary and
// follows it when they fail over). Each client gets its own copy of the
// options. It connects lazily, at its first command.
func (u URL) NewClient() redis.UniversalClient {
	switch u.Topology {
	case Cluster:
		o := *u.Cluster
		return redis.NewClusterClient(&o)
	case Sentinel:
		o := *u.Failover
		return redis.NewFailoverClient(&o)
	default:
		o := *u.Options
		return redis.NewClient(&o)
	}
}
