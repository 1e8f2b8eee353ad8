// Package distributed shares leases across a fleet of agora workers through
// Redis.
package distributed

import (
	"errors"

	"github.com/agora-etl/agora/runtime"
)

// RedisWorkerCoordinator is a runtime.Coordinator backed by Redis.
type RedisWorkerCoordinator struct {
	runtime.Coordinator
}

// NewRedisWorkerCoordinator validates opts and returns a coordinator. It does
// not connect yet.
func NewRedisWorkerCoordinator(opts Options) (*RedisWorkerCoordinator, error) {
	return nil, errors.New("distributed: not implemented")
}
