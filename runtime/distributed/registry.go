package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/buildinfo"
	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// WorkerInfo is one worker's registry record.
type WorkerInfo struct {
	// ID is the worker id passed to Start.
	ID string `json:"id"`
	// Host is the worker's host name.
	Host string `json:"host"`
	// PID is the worker's process id.
	PID int `json:"pid"`
	// Pipelines are the pipeline ids the worker runs.
	Pipelines []string `json:"pipelines"`
	// StartedAt is when the worker started, by its clock.
	StartedAt time.Time `json:"started_at"`
	// LastHeartbeat is when the worker last refreshed its record, by its clock.
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Version is the agora version the worker was built with.
	Version string `json:"version"`
	// Schedules maps each pipeline id to its schedule in directive form
	// (runtime.Schedule.String), when the pool published them.
	Schedules map[string]string `json:"schedules,omitempty"`
	// After maps each pipeline that waits for others to its upstreams
	// (runtime.ScheduledPipeline.After), when the pool published them.
	After map[string][]string `json:"after,omitempty"`
}

// workerRecordTTL keeps a record through two missed heartbeats.
func (c *RedisWorkerCoordinator) workerRecordTTL() time.Duration { return c.s.recordTTL }

// heartbeat writes the whole worker record (so it reappears after a Redis
// restart) and its expiry, atomically in one round trip. A script rather than
// MULTI/EXEC: an error reply inside a transaction (LOADING, say) can leave
// unread replies on a pooled connection.
func (c *RedisWorkerCoordinator) heartbeat(ctx context.Context) error {
	call, ok := c.recordCall()
	if !ok {
		return nil
	}
	ctx, cancel := c.opContext(ctx, opHeartbeat)
	defer cancel()
	sent := c.clock.Now()
	epoch, err := call.Script.Run(ctx, c.client, call.Keys, call.Args...).Int64()
	if err != nil {
		c.grantRefused("heartbeat", err)
		return c.failure("heartbeat", err)
	}
	c.noteEpoch(epoch, "the state epoch changed: Redis lost its data (restart without persistence, FLUSHALL), restarted from a file or failed over")
	c.noteRecord(sent)
	c.noteOK()
	c.acceptedWrite()
	return nil
}

// recordCall returns the heartbeat script call that writes the worker
// record, or false when the worker is not running.
func (c *RedisWorkerCoordinator) recordCall() (leasebackend.Call, bool) {
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return leasebackend.Call{}, false
	}
	rec := c.record
	c.mu.Unlock()
	fields := []any{
		"id", rec.id,
		"host", rec.host,
		"pid", rec.pid,
		"pipelines", rec.pipelines,
		"started_ms", rec.startedMs,
		"heartbeat_ms", c.clock.Now().UnixMilli(),
		"version", rec.version,
		"schedules", rec.schedules,
		"after", rec.after,
	}
	ttl := c.workerRecordTTL().Milliseconds()
	if _, cluster := c.client.(*redis.ClusterClient); cluster {
		// On a Cluster the record and the epoch live in different slots.
		return leasebackend.Call{Script: leasebackend.HeartbeatScript, Keys: []string{c.keys.worker(rec.id)}, Args: append([]any{ttl}, fields...)}, true
	}
	// The record carries the epoch (see epoch.go).
	return leasebackend.Call{
		Script: leasebackend.HeartbeatScript,
		Keys:   []string{c.keys.worker(rec.id), c.keys.epoch()},
		Args:   append([]any{ttl, c.epoch.Load(), c.keys.workerPattern()}, fields...),
	}, true
}

// workerRecord is the part of a worker's registry record that does not
// change while it runs.
type workerRecord struct {
	id, host, pipelines, version string
	schedules                    string // JSON object, pipeline id → schedule
	after                        string // JSON object, pipeline id → its upstreams
	pid                          int
	startedMs                    int64
}

func newWorkerRecord(workerID string, pipelines []string, started time.Time) workerRecord {
	host, _ := os.Hostname()
	list, _ := json.Marshal(pipelines)
	return workerRecord{
		id: workerID, host: host, pipelines: string(list), version: agoraVersion(),
		pid: os.Getpid(), startedMs: started.UnixMilli(),
	}
}

// heartbeatLoop refreshes the worker record every HeartbeatInterval.
func (c *RedisWorkerCoordinator) heartbeatLoop(stop <-chan struct{}) {
	defer c.loops.Done()
	c.measureClock(context.Background())
	timer := c.clock.NewTimer(c.s.HeartbeatInterval)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C():
		}
		_ = c.heartbeat(context.Background())
		if c.clockDue() {
			c.measureClock(context.Background())
		}
		timer.Reset(c.s.HeartbeatInterval)
	}
}

// ListWorkers returns the registered workers under this key prefix, sorted
// by id. It finds them with SCAN (never KEYS, which blocks the server), so it
// is safe on a busy Redis; a record that expires during the scan is left
// out.
func (c *RedisWorkerCoordinator) ListWorkers(ctx context.Context) ([]WorkerInfo, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	ctx = withOp(ctx, opInspect)
	keys, err := c.scanWorkerKeys(ctx)
	if err != nil {
		return nil, c.failure("list workers", err)
	}
	if len(keys) == 0 {
		c.noteOK()
		return []WorkerInfo{}, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	_, err = c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGetAll(ctx, k)
		}
		return nil
	})
	if err != nil && !isWrongType(err) {
		return nil, c.failure("list workers", err)
	}
	out := make([]WorkerInfo, 0, len(keys))
	for i, cmd := range cmds {
		switch err := cmd.Err(); {
		case isWrongType(err):
			c.warnForeign(keys[i], "not a hash: not a worker record")
			continue
		case err != nil && err != redis.Nil:
			return nil, c.failure("list workers", err)
		}
		info, ok := parseWorkerRecord(cmd.Val())
		if !ok {
			if len(cmd.Val()) > 0 { // empty: expired during the scan
				c.warnForeign(keys[i], "a hash without the id field of a worker record")
			}
			continue
		}
		out = append(out, info)
	}
	c.noteOK()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// scanWorkerKeys returns every worker key, scanning each master of a
// cluster: a worker's record lives in the slot of its own key, so the
// records of one fleet are spread over every shard.
func (c *RedisWorkerCoordinator) scanWorkerKeys(ctx context.Context) ([]string, error) {
	pattern := c.keys.workerPattern()
	return collectFromPrimaryNodes(ctx, c.client, func(ctx context.Context, node redis.Cmdable) ([]string, error) {
		var out []string
		iter := node.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		return out, iter.Err()
	})
}

func parseWorkerRecord(m map[string]string) (WorkerInfo, bool) {
	if m["id"] == "" {
		return WorkerInfo{}, false
	}
	info := WorkerInfo{ID: m["id"], Host: m["host"], Version: m["version"], Pipelines: []string{}}
	info.PID, _ = strconv.Atoi(m["pid"])
	_ = json.Unmarshal([]byte(m["pipelines"]), &info.Pipelines)
	if ms, err := strconv.ParseInt(m["started_ms"], 10, 64); err == nil {
		info.StartedAt = time.UnixMilli(ms)
	}
	if ms, err := strconv.ParseInt(m["heartbeat_ms"], 10, 64); err == nil {
		info.LastHeartbeat = time.UnixMilli(ms)
	}
	if s := m["schedules"]; s != "" {
		_ = json.Unmarshal([]byte(s), &info.Schedules)
	}
	if s := m["after"]; s != "" {
		_ = json.Unmarshal([]byte(s), &info.After)
	}
	return info, true
}

// agoraVersion returns the agora module version the binary was built with.
func agoraVersion() string { return buildinfo.Version() }

// String describes w for logs. An id or host with control characters (a
// worker_id with a newline) is quoted, so it cannot forge a line.
func (w WorkerInfo) String() string {
	return fmt.Sprintf("%s (host %s, pid %d, pipelines %v, last heartbeat %s)",
		texttable.Printable(w.ID), texttable.Printable(w.Host), w.PID, w.Pipelines, w.LastHeartbeat.Format(time.RFC3339))
}
