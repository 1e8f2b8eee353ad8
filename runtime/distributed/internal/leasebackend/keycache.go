package leasebackend

import "sync"

// KeyCache remembers the keys built for each pipeline. Every lease operation
// needs them, and building them afresh allocates several strings per
// operation; a worker has a fixed set of pipelines, so the cache stays as
// small as that set.
type KeyCache struct {
	build func(pipelineID string) []string
	m     sync.Map // pipeline id → []string
}

// NewKeyCache returns a KeyCache that builds a pipeline's keys with build,
// once.
func NewKeyCache(build func(pipelineID string) []string) *KeyCache {
	return &KeyCache{build: build}
}

// Get returns pipelineID's keys. Callers may reslice the result but must
// not write to it: it is shared.
func (c *KeyCache) Get(pipelineID string) []string {
	if ks, ok := c.m.Load(pipelineID); ok {
		return ks.([]string)
	}
	ks, _ := c.m.LoadOrStore(pipelineID, c.build(pipelineID))
	return ks.([]string)
}
