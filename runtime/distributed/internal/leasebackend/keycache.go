package distributed

import "sync"

// keyCache remembers the keys built for each pipeline. Every lease operation
// needs them, and building them afresh allocates several strings per
// operation; a worker has a fixed set of pipelines, so the cache stays as
// small as that set.
type keyCache struct {
	build func(pipelineID string) []string
	m     sync.Map // pipeline id → []string
}

func newKeyCache(build func(pipelineID string) []string) *keyCache {
	return &keyCache{build: build}
}

// get returns pipelineID's keys. Callers may reslice the result but must
// not write to it: it is shared.
func (c *keyCache) get(pipelineID string) []string {
	if ks, ok := c.m.Load(pipelineID); ok {
		return ks.([]string)
	}
	ks, _ := c.m.LoadOrStore(pipelineID, c.build(pipelineID))
	return ks.([]string)
}
