package config

import (
	"context"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime/distributed"
)

// readStateFromEnv returns the read state of a worker that coordinates
// through Redis: the file source's marks live in the coordinator's Redis,
// under its key prefix followed by "files:", so every replica sharing the
// leases shares what was read, and losing that Redis loses both together.
// The returned function closes the connection.
func readStateFromEnv() (etl.ReadState, func(context.Context) error, error) {
	cfg, err := distributed.LoadConfig()
	if err != nil {
		return nil, nil, err
	}
	if cfg.RedisURL == "" {
		// No Redis: the sources keep their state beside the config file.
		return nil, nil, nil
	}
	client, err := distributed.NewStateClient(cfg.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = distributed.DefaultKeyPrefix
	}
	return etl.NewRedisReadState(client, prefix+"files:"), func(context.Context) error { return client.Close() }, nil
}
