package distributed

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
)

// NewStateClient returns a go-redis client for a URL of the forms
// AGORA_DISTRIBUTED_REDIS_URL takes (one server, redis+cluster://,
// redis+sentinel://), with the coordinator's client settings. Components
// that keep their state beside the leases, such as the file source's read
// marks, connect through it. Errors never quote a password.
func NewStateClient(rawURL string) (redis.UniversalClient, error) {
	u, err := redisurl.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return newPrimaryClient(u, nil), nil
}
