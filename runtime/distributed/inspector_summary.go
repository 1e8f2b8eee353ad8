package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// historyMinScore is the lowest score a reader shows: the history floor or
// the policy's age cut, whichever is later.
func (c *RedisWorkerCoordinator) historyMinScore() float64 {
	pol := c.historyPolicy()
	return math.Max(historyScoreFloor, float64(c.clock.Now().UnixMilli()-pol.MaxAge.Milliseconds()))
}

// historySummary is what the summary script tells of one pipeline's
// history.
type historySummary struct {
	newest      *runtime.RunRecord
	lastSuccess *time.Time
	stale       int
}

// historySummaries summarises the run history of each of ids on the
// server (leasebackend.HistorySummaryScript), one pipelined round trip.
func (c *RedisWorkerCoordinator) historySummaries(ctx context.Context, ids []string) ([]historySummary, error) {
	pol := c.historyPolicy()
	lo := strconv.FormatFloat(c.historyMinScore(), 'f', 0, 64)
	calls := make([]leasebackend.Call, len(ids))
	for i, id := range ids {
		calls[i] = leasebackend.Call{Script: leasebackend.HistorySummaryScript, Keys: []string{c.keys.done(id)}, Args: []any{lo, pol.Limit}}
	}
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	cmds := leasebackend.RunPipelined(opCtx, c.client, calls)
	out := make([]historySummary, len(ids))
	for i, cmd := range cmds {
		v, err := cmd.Slice()
		if err != nil && !errors.Is(err, redis.Nil) {
			if redis.HasErrorPrefix(err, "WRONGTYPE") {
				continue // not agora's: shown as a pipeline without history
			}
			return nil, c.failure("summarise the run history", err)
		}
		if len(v) != 5 {
			continue
		}
		member, _ := v[1].(string)
		score, _ := v[2].(string)
		if end, err := strconv.ParseFloat(score, 64); err == nil && member != "" {
			if rec, ok := decodeRunMember(ids[i], member, end); ok {
				out[i].newest = &rec
			}
		}
		if s, _ := v[3].(string); s != "" {
			if ms, err := strconv.ParseFloat(s, 64); err == nil {
				t := time.UnixMilli(int64(ms)).UTC()
				out[i].lastSuccess = &t
			}
		}
		if n, ok := v[4].(int64); ok {
			out[i].stale = int(n)
		}
	}
	return out, nil
}

// Summaries is Overview read for a large fleet: every pipeline a live
// worker runs or that is paused, and the live workers, with each
// pipeline's history summarised on the server (last outcome and error,
// last success, stale refusals) instead of sent whole. Its rows are
// Overview's, field for field; it costs Redis about one short script per
// pipeline and sends one run per pipeline, where Overview sends every run
// kept.
func (in *Inspector) Summaries(ctx context.Context) (Overview, error) {
	ws, err := in.Workers(ctx)
	if err != nil {
		return Overview{}, err
	}
	ids, by := knownPipelines(ws)
	paused, err := in.c.PausedPipelines(ctx)
	if err != nil {
		return Overview{}, err
	}
	for id := range paused {
		if _, ok := by[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	leases, err := in.leaseInfos(ctx, ids, ws)
	if err != nil {
		return Overview{}, err
	}
	sums, err := in.c.historySummaries(ctx, ids)
	if err != nil {
		return Overview{}, err
	}
	schedules := map[string]string{}
	for _, w := range ws {
		for id, s := range w.Schedules {
			schedules[id] = s
		}
	}
	now := in.now()
	rows := make([]PipelineInfo, len(ids))
	for i, id := range ids {
		rows[i] = in.row(id, schedules[id], by[id], leases[i], paused, now)
		s := sums[i]
		var newest []runtime.RunRecord
		if s.newest != nil {
			rows[i].LastOutcome, rows[i].LastError = s.newest.Outcome, s.newest.Error
			newest = []runtime.RunRecord{*s.newest}
		}
		rows[i].LastSuccess, rows[i].StaleRefusals = s.lastSuccess, s.stale
		rows[i].NextRun = nextRun(rows[i].Schedule, rows[i].NextFire, newest, now)
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
	if p, ok := paused[id]; ok {
		at := p.At.UTC()
		r.Paused, r.PausedBy, r.PausedAt = true, p.By, &at
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
func (in *Inspector) Pipeline(ctx context.Context, id string) (info PipelineInfo, runs []runtime.RunRecord, found bool, err error) {
	ws, err := in.Workers(ctx)
	if err != nil {
		return PipelineInfo{}, nil, false, err
	}
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
	schedule := ""
	for _, w := range ws {
		if s, ok := w.Schedules[id]; ok {
			schedule = s
		}
	}
	now := in.now()
	info = in.row(id, schedule, by[id], leases[0], paused, now)
	info.fromHistory(histories[0])
	info.NextRun = nextRun(info.Schedule, info.NextFire, histories[0], now)
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
	Outcome runtime.RunOutcome
	// Paused keeps the paused pipelines.
	Paused bool
}

// OutcomeNone is PipelineFilter.Outcome for pipelines with no run kept.
const OutcomeNone runtime.RunOutcome = "none"

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
