package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// historyMinScore is the lowest score a reader shows: the history floor or
// the policy's age cut, whichever is later.
func (c *RedisWorkerCoordinator) historyMinScore() float64 {
	pol := c.historyPolicy()
	return math.Max(historyScoreFloor, float64(c.clock.Now().UnixMilli()-pol.MaxAge.Milliseconds()))
}

// summaryChunk is how many pipelines one round trip of Summaries reads:
// Redis serves a pipelined batch without serving anyone else, so a large
// fleet is read in batches short enough that the workers' commands are
// never kept waiting long.
const summaryChunk = 100

// newestRuns reads the newest run of each of ids (nil: none kept), in
// round trips of summaryChunk pipelines.
func (c *RedisWorkerCoordinator) newestRuns(ctx context.Context, ids []string) ([]*history.Record, error) {
	// Below the failure state's members (failures.go), which share the set.
	by := &redis.ZRangeBy{Max: "(" + strconv.FormatInt(failBand, 10), Min: strconv.FormatFloat(c.historyMinScore(), 'f', 0, 64), Count: 1}
	out := make([]*history.Record, len(ids))
	for lo := 0; lo < len(ids); lo += summaryChunk {
		chunk := ids[lo:min(lo+summaryChunk, len(ids))]
		opCtx, cancel := c.opContext(ctx, opHistory)
		cmds := make([]*redis.ZSliceCmd, len(chunk))
		_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
			for i, id := range chunk {
				cmds[i] = p.ZRevRangeByScoreWithScores(opCtx, c.keys.done(id), by)
			}
			return nil
		})
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "WRONGTYPE") {
			return nil, c.failure("read the run history", err)
		}
		for i, cmd := range cmds {
			zs, _ := cmd.Result() // a key of another type: no runs
			if len(zs) == 0 {
				continue
			}
			member, _ := zs[0].Member.(string)
			if rec, ok := decodeRunMember(chunk[i], member, zs[0].Score); ok {
				out[lo+i] = &rec
			}
		}
	}
	return out, nil
}

// failureStatesChunked is FailureStates in round trips of summaryChunk
// pipelines.
func (c *RedisWorkerCoordinator) failureStatesChunked(ctx context.Context, ids []string) ([]runtime.FailureState, error) {
	out := make([]runtime.FailureState, 0, len(ids))
	for lo := 0; lo < len(ids); lo += summaryChunk {
		part, err := c.FailureStates(ctx, ids[lo:min(lo+summaryChunk, len(ids))])
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// leaseInfosChunked is leaseInfos in round trips of summaryChunk
// pipelines.
func (in *Inspector) leaseInfosChunked(ctx context.Context, ids []string, ws []WorkerInfo) ([]LeaseInfo, error) {
	out := make([]LeaseInfo, 0, len(ids))
	for lo := 0; lo < len(ids); lo += summaryChunk {
		part, err := in.leaseInfos(ctx, ids[lo:min(lo+summaryChunk, len(ids))], ws)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// Summaries is Overview read for a large fleet: every pipeline a live
// worker runs or that is paused, and the live workers, reading only the
// newest run of each pipeline where Overview reads every run kept (with
// long errors, megabytes a pipeline), in short batches. So its rows are
// Overview's except LastSuccess and StaleRefusals, which only every run
// tells: Summaries leaves them nil and 0, and Pipeline (one pipeline) or
// Overview fill them. The dashboard's front page shows the last completed
// slot instead.
func (in *Inspector) Summaries(ctx context.Context) (Overview, error) {
	ws, ids, by, paused, err := in.fleetPipelines(ctx)
	if err != nil {
		return Overview{}, err
	}
	leases, err := in.leaseInfosChunked(ctx, ids, ws)
	if err != nil {
		return Overview{}, err
	}
	newest, err := in.c.newestRuns(ctx, ids)
	if err != nil {
		return Overview{}, err
	}
	failures, err := in.c.failureStatesChunked(ctx, ids)
	if err != nil {
		return Overview{}, err
	}
	backfills, err := in.runningBackfills(ctx)
	if err != nil {
		return Overview{}, err
	}
	schedules := schedulesOf(ws)
	now := in.now()
	rows := make([]PipelineInfo, len(ids))
	for i, id := range ids {
		rows[i] = in.row(id, schedules[id], by[id], leases[i], paused, now)
		var runs []history.Record
		if n := newest[i]; n != nil {
			rows[i].LastOutcome, rows[i].LastError = n.Outcome, n.Error
			runs = []history.Record{*n}
		}
		rows[i].plan(runs, failures[i], now)
		if p, ok := backfills[id]; ok {
			rows[i].Backfill = p.summary()
		}
	}
	return Overview{Pipelines: rows, Workers: ws}, nil
}

// row is a pipeline's row without the fields its history gives.
func (in *Inspector) row(id, schedule string, workers []string, l LeaseInfo, paused map[string]PauseInfo, now time.Time) PipelineInfo {
	r := PipelineInfo{PipelineID: id, Schedule: schedule, Workers: workers, OnceCompleted: l.OnceCompleted, Lease: l}
	if r.Workers == nil {
		r.Workers = []string{}
	}
	if l.LastCompleted > 0 {
		t := time.Unix(l.LastCompleted, 0).UTC()
		r.LastCompleted = &t
	}
	if l.LastDeadlineMissed > 0 {
		t := time.Unix(l.LastDeadlineMissed, 0).UTC()
		r.LastDeadlineMissed = &t
	}
	if p, ok := paused[id]; ok {
		r.setPause(p)
	}
	if next, ok := nextFire(r.Schedule, now); ok {
		r.NextFire = &next
	}
	return r
}

// Pipeline reads one pipeline as Overview shows it, and its run history
// (newest first), reading that pipeline's keys only (and the worker
// registry, which says who runs it). found is false when no live worker
// runs it, it is not paused and it has no history.
func (in *Inspector) Pipeline(ctx context.Context, id string) (info PipelineInfo, runs []history.Record, found bool, err error) {
	ws, err := in.Workers(ctx)
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
	return in.PipelineAmong(ctx, id, ws)
}

// PipelineAmong is Pipeline with the live workers already read (as
// Summaries returns them): the registry is scanned once for many pages.
func (in *Inspector) PipelineAmong(ctx context.Context, id string, ws []WorkerInfo) (info PipelineInfo, runs []history.Record, found bool, err error) {
	_, by := knownPipelines(ws)
	paused, err := in.c.PausedPipelines(ctx)
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
	leases, err := in.leaseInfos(ctx, []string{id}, ws)
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
	histories, err := in.c.RunHistories(ctx, []string{id}, 0)
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
	failures, err := in.c.FailureStates(ctx, []string{id})
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
	now := in.now()
	info = in.row(id, schedulesOf(ws)[id], by[id], leases[0], paused, now)
	info.fromHistory(histories[0])
	info.plan(histories[0], failures[0], now)
	if p, err := in.c.readBackfill(ctx, id); err == nil && p.State == BackfillRunning {
		info.Backfill = p.summary()
	} else if err != nil && !errors.Is(err, ErrNoBackfill) && !errors.Is(err, ErrForeignData) {
		return PipelineInfo{}, nil, false, err
	}
	_, isPaused := paused[id]
	found = len(by[id]) > 0 || isPaused || len(histories[0]) > 0
	return info, histories[0], found, nil
}

// PipelineFilter selects rows of an Overview (PipelineFilter.Keep). Every
// field set must hold; the zero filter keeps every row.
type PipelineFilter struct {
	// Text is a part of the pipeline id, any case.
	Text string
	// Worker keeps the pipelines this live worker runs.
	Worker string
	// Outcome keeps the pipelines whose last run had it; "none" keeps
	// those without a run in the history.
	Outcome history.Outcome
	// Paused keeps the paused pipelines.
	Paused bool
}

// OutcomeNone is PipelineFilter.Outcome for pipelines with no run kept.
const OutcomeNone history.Outcome = "none"

// Keep reports whether r passes f.
func (f PipelineFilter) Keep(r PipelineInfo) bool {
	switch {
	case f.Text != "" && !containsFold(r.PipelineID, f.Text):
		return false
	case f.Worker != "" && !contains(r.Workers, f.Worker):
		return false
	case f.Outcome == OutcomeNone && r.LastOutcome != "":
		return false
	case f.Outcome != "" && f.Outcome != OutcomeNone && r.LastOutcome != f.Outcome:
		return false
	case f.Paused && !r.Paused:
		return false
	}
	return true
}

// PipelinePage is one page of an Overview's pipelines that pass a filter.
type PipelinePage struct {
	// Pipelines are the page's rows, sorted by id.
	Pipelines []PipelineInfo `json:"pipelines"`
	// Total is how many pipelines pass the filter.
	Total int `json:"total"`
	// Offset is the index of the page's first row among them.
	Offset int `json:"offset"`
	// Limit is the page size asked for.
	Limit int `json:"limit"`
}

// MaxPageSize is the most rows a page of pipelines or runs holds.
const MaxPageSize = 500

// ErrBadQuery is wrapped by the errors for a page or filter out of range
// (a limit of 0 or over MaxPageSize, a negative offset, a malformed
// cursor).
var ErrBadQuery = errors.New("distributed: bad query")

// Page returns the rows of o that pass f, from offset, at most limit
// (1 to MaxPageSize).
func (o Overview) Page(f PipelineFilter, offset, limit int) (PipelinePage, error) {
	if limit < 1 || limit > MaxPageSize {
		return PipelinePage{}, fmt.Errorf("%w: limit %d: want 1 to %d", ErrBadQuery, limit, MaxPageSize)
	}
	if offset < 0 {
		return PipelinePage{}, fmt.Errorf("%w: offset %d: must not be negative", ErrBadQuery, offset)
	}
	p := PipelinePage{Pipelines: []PipelineInfo{}, Offset: offset, Limit: limit}
	for _, r := range o.Pipelines {
		if !f.Keep(r) {
			continue
		}
		if p.Total >= offset && len(p.Pipelines) < limit {
			p.Pipelines = append(p.Pipelines, r)
		}
		p.Total++
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains sub, ASCII letters of any case
// (the same folding the history's match script does).
func containsFold(s, sub string) bool {
	return strings.Contains(asciiLower(s), asciiLower(sub))
}

// asciiLower lowers ASCII letters only, as Lua's string.lower does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
