package history

import (
	"sync"
	"time"
)

// Memory is a run history kept in this process's memory, for a pool that
// runs without a shared coordinator (runtime.WithRunHistory): per
// pipeline, a compact ring of its last runs (a scheduled success costs 4
// or 5 bytes) under a lock of its own, so runs of different pipelines
// never wait on each other. What it keeps lives as long as the process.
//
// Runs are kept at the precision of the shared (Redis) history, so a
// pipeline's history reads the same from either: End in whole
// milliseconds, Duration in whole microseconds, Start = End - Duration,
// in the local zone.
//
// A Memory is safe for concurrent use. The zero Memory keeps the default
// policy; New sets another.
type Memory struct {
	policy Policy

	mu      sync.RWMutex
	entries map[string]*memoryEntry // made at the first run kept
}

// memoryEntry is one pipeline's runs and the lock they are kept under.
type memoryEntry struct {
	mu   sync.Mutex
	runs ring
}

// New returns a Memory that keeps what p says: at most p.Limit runs per
// pipeline, none read back older than p.MaxAge, nothing when p.Off. Zero
// fields are the defaults.
func New(p Policy) *Memory {
	return &Memory{policy: p}
}

// Policy returns the bounds m keeps runs within, defaults filled in, so
// that a caller can log them or apply the same bounds elsewhere.
func (m *Memory) Policy() Policy {
	if m.policy.Off {
		return Policy{Off: true}
	}
	return m.policy.WithDefaults()
}

// Add keeps rec as the newest run of rec.PipelineID, forgetting that
// pipeline's oldest run beyond the limit. With the policy off it keeps
// nothing. Once a pipeline's buffer has grown to what its runs need, Add
// allocates nothing.
func (m *Memory) Add(rec Record) {
	p := m.Policy()
	if p.Off {
		return
	}
	e := m.entry(rec.PipelineID)
	e.mu.Lock()
	e.runs.add(rec, rec.PipelineID, p.Limit)
	e.mu.Unlock()
}

// Newest returns the runs of pipelineID kept, newest first, at most limit
// of them (limit <= 0: all kept), none that ended before now less the
// policy's MaxAge. It returns an empty slice, not nil, when there are
// none, so that it encodes as a JSON array.
func (m *Memory) Newest(pipelineID string, limit int, now time.Time) []Record {
	m.mu.RLock()
	e := m.entries[pipelineID]
	m.mu.RUnlock()
	if e == nil {
		return []Record{}
	}
	oldest := now.Add(-m.Policy().MaxAge)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runs.n == 0 {
		return []Record{}
	}
	return e.runs.newest(pipelineID, limit, func(r Record) bool { return !r.End.Before(oldest) })
}

// entry returns pipelineID's entry, made on its first run.
func (m *Memory) entry(pipelineID string) *memoryEntry {
	m.mu.RLock()
	e, ok := m.entries[pipelineID]
	m.mu.RUnlock()
	if ok {
		return e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok = m.entries[pipelineID]; !ok {
		if m.entries == nil {
			m.entries = make(map[string]*memoryEntry)
		}
		e = &memoryEntry{}
		m.entries[pipelineID] = e
	}
	return e
}
