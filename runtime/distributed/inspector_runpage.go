package distributed

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
	"github.com/agora-etl/agora/runtime/history"
)

// RunFilter selects runs of the fleet's history. Every field set must
// hold; the zero filter keeps every run of every pipeline a live worker
// runs.
type RunFilter struct {
	// PipelineIDs are the pipelines to read; none: every pipeline a live
	// worker runs. A named pipeline need not be live.
	PipelineIDs []string
	// Outcomes keeps the runs with one of these outcomes.
	Outcomes []history.Outcome
	// Failed keeps only the runs that did not succeed.
	Failed bool
	// Worker keeps the runs this worker ran.
	Worker string
	// From and To keep the runs that ended within [From, To]; a zero
	// time is open.
	From, To time.Time
	// Text keeps the runs whose error contains it, ASCII letters of any
	// case.
	Text string
}

// Keep reports whether run passes f (its pipeline is not checked).
func (f RunFilter) Keep(run history.Record) bool {
	switch {
	case len(f.Outcomes) > 0 && !containsOutcome(f.Outcomes, run.Outcome):
		return false
	case f.Failed && run.Outcome == history.OutcomeSucceeded:
		return false
	case f.Worker != "" && run.WorkerID != f.Worker:
		return false
	case !f.From.IsZero() && run.End.Before(f.From.Truncate(time.Millisecond)):
		return false
	case !f.To.IsZero() && run.End.After(f.To):
		return false
	case f.Text != "" && !containsFold(run.Error, f.Text):
		return false
	}
	return true
}

func containsOutcome(list []history.Outcome, o history.Outcome) bool {
	for _, v := range list {
		if v == o {
			return true
		}
	}
	return false
}

// RunPageQuery asks Inspector.RunPage for one page of runs.
type RunPageQuery struct {
	RunFilter
	// Limit is the page size, 1 to MaxPageSize.
	Limit int
	// Cursor is the Next of the page before; "" for the first page.
	Cursor string
}

// RunPage is one page of the runs that pass a filter, newest first (by
// end, then pipeline id).
type RunPage struct {
	// Runs are the page's runs.
	Runs []history.Record `json:"runs"`
	// Total is how many runs pass the filter, on every page.
	Total int `json:"total"`
	// Next is the cursor of the next page; "" on the last.
	Next string `json:"next,omitempty"`
}

// cursor is where a page starts: at or below the end atMs (Unix ms),
// after skip runs that ended in that very millisecond and were on the
// pages before. Keyset paging, so a page costs the same however deep it
// is and runs recorded meanwhile do not shift it.
type cursor struct {
	atMs int64
	skip int
}

func (c cursor) String() string { return strconv.FormatInt(c.atMs, 10) + "." + strconv.Itoa(c.skip) }

func parseCursor(s string) (cursor, bool, error) {
	if s == "" {
		return cursor{}, false, nil
	}
	at, skip, ok := strings.Cut(s, ".")
	ms, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.Atoi(skip)
	if !ok || err1 != nil || err2 != nil || ms < 0 || n < 0 || n > 1_000_000 {
		return cursor{}, false, fmt.Errorf("%w: cursor %q: want the next value of the page before", ErrBadQuery, s)
	}
	return cursor{atMs: ms, skip: n}, true, nil
}

// matchArgs are the history match script's filter arguments (see
// lua/history_match.lua), after the key.
func (c *RedisWorkerCoordinator) matchArgs(f RunFilter, cur cursor, hasCursor bool, want int) []any {
	lo := c.historyMinScore()
	if !f.From.IsZero() {
		if ms := float64(f.From.Truncate(time.Millisecond).UnixMilli()); ms > lo {
			lo = ms
		}
	}
	max, top := "+inf", "+inf"
	if !f.To.IsZero() {
		max = strconv.FormatInt(f.To.UnixMilli(), 10)
	}
	if hasCursor {
		top = strconv.FormatInt(cur.atMs, 10)
	}
	codes := make([]string, 0, len(f.Outcomes))
	for _, o := range f.Outcomes {
		if code, ok := outcomeCodes[o]; ok {
			codes = append(codes, code)
		} else {
			codes = append(codes, string(o))
		}
	}
	noSuccess, plain := "", ""
	if f.Failed {
		noSuccess = "1"
	}
	text := asciiLower(f.Text)
	if plainInJSON(text) {
		plain = "1"
	}
	return []any{strconv.FormatFloat(lo, 'f', 0, 64), max, top, want, strings.Join(codes, ","), noSuccess, f.Worker, text, plain, c.historyPolicy().Limit}
}

// plainInJSON reports whether s reads the same inside a run member's JSON
// (printable ASCII that encoding/json and appendJSONString do not escape).
func plainInJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// hit is a run the match script found: its pipeline and end.
type hit struct {
	pipeline int // index in the ids
	score    int64
}

// RunPage reads one page of the runs that pass q, newest first. The
// filter runs on the server (lua/history_match.lua), which answers only
// the ends of the matches; the page's members alone are then fetched. So
// the reader receives the page's runs however many the fleet keeps, and
// Redis reads every run kept of the pipelines searched, in short batches:
// naming the pipelines (or one, as a pipeline's page does) is what keeps
// a search of a large fleet cheap.
func (in *Inspector) RunPage(ctx context.Context, q RunPageQuery) (RunPage, error) {
	if q.Limit < 1 || q.Limit > MaxPageSize {
		return RunPage{}, fmt.Errorf("%w: limit %d: want 1 to %d", ErrBadQuery, q.Limit, MaxPageSize)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return RunPage{}, fmt.Errorf("%w: the time range ends (%s) before it starts (%s)", ErrBadQuery, q.To.Format(time.RFC3339), q.From.Format(time.RFC3339))
	}
	cur, hasCursor, err := parseCursor(q.Cursor)
	if err != nil {
		return RunPage{}, err
	}
	ids := q.PipelineIDs
	if len(ids) == 0 {
		ws, err := in.Workers(ctx)
		if err != nil {
			return RunPage{}, err
		}
		ids, _ = knownPipelines(ws)
	}
	ids = dedupe(ids)
	want := q.Limit + cur.skip + 1 // one more tells whether a page follows
	hits, total, err := in.c.matchRuns(ctx, ids, q.RunFilter, cur, hasCursor, want)
	if err != nil {
		return RunPage{}, err
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return ids[hits[i].pipeline] < ids[hits[j].pipeline]
	})
	if hasCursor {
		n := 0
		for n < len(hits) && n < cur.skip && hits[n].score == cur.atMs {
			n++
		}
		hits = hits[n:]
	}
	more := len(hits) > q.Limit
	if more {
		hits = hits[:q.Limit]
	}
	runs, err := in.c.fetchHits(ctx, ids, hits, q.RunFilter)
	if err != nil {
		return RunPage{}, err
	}
	page := RunPage{Runs: runs, Total: total}
	if more && len(hits) > 0 {
		last := hits[len(hits)-1].score
		next := cursor{atMs: last}
		if hasCursor && last == cur.atMs {
			next.skip = cur.skip
		}
		for _, h := range hits {
			if h.score == last {
				next.skip++
			}
		}
		page.Next = next.String()
	}
	return page, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// matchChunk is how many pipelines one round trip of matchRuns searches:
// the script reads every run kept of each (with long errors, hundreds of
// kilobytes), and Redis serves a pipelined batch without serving anyone
// else, so the batches are kept short.
const matchChunk = 10

// matchRuns runs the match script on each pipeline's history, in round
// trips of matchChunk pipelines, and returns the ends it answered and the
// number of matches.
func (c *RedisWorkerCoordinator) matchRuns(ctx context.Context, ids []string, f RunFilter, cur cursor, hasCursor bool, want int) ([]hit, int, error) {
	args := c.matchArgs(f, cur, hasCursor, want)
	cmds := make([]*redis.Cmd, 0, len(ids))
	for lo := 0; lo < len(ids); lo += matchChunk {
		chunk := ids[lo:min(lo+matchChunk, len(ids))]
		calls := make([]leasebackend.Call, len(chunk))
		for i, id := range chunk {
			calls[i] = leasebackend.Call{Script: leasebackend.HistoryMatchScript, Keys: []string{c.keys.done(id)}, Args: args}
		}
		opCtx, cancel := c.opContext(ctx, opHistory)
		cmds = append(cmds, leasebackend.RunPipelined(opCtx, c.client, calls)...)
		cancel()
	}
	var hits []hit
	total := 0
	for i, cmd := range cmds {
		v, err := cmd.Slice()
		if err != nil {
			if errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "WRONGTYPE") {
				continue // not agora's: no runs
			}
			return nil, 0, c.failure("search the run history", err)
		}
		if len(v) == 0 {
			continue
		}
		n, _ := v[0].(int64)
		total += int(n)
		for _, s := range v[1:] {
			str, _ := s.(string)
			if ms, err := strconv.ParseFloat(str, 64); err == nil {
				hits = append(hits, hit{pipeline: i, score: int64(ms)})
			}
		}
	}
	return hits, total, nil
}

// fetchHits reads the members of hits (one ZREVRANGEBYSCORE per pipeline
// over its hits' span, one round trip) and returns them in hits' order,
// each checked against f again.
func (c *RedisWorkerCoordinator) fetchHits(ctx context.Context, ids []string, hits []hit, f RunFilter) ([]history.Record, error) {
	type span struct{ lo, hi int64 }
	spans := map[int]*span{}
	var order []int
	for _, h := range hits {
		s, ok := spans[h.pipeline]
		if !ok {
			spans[h.pipeline] = &span{lo: h.score, hi: h.score}
			order = append(order, h.pipeline)
			continue
		}
		s.lo, s.hi = min(s.lo, h.score), max(s.hi, h.score)
	}
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	cmds := make(map[int]*redis.ZSliceCmd, len(order))
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		for _, i := range order {
			s := spans[i]
			cmds[i] = p.ZRevRangeByScoreWithScores(opCtx, c.keys.done(ids[i]), &redis.ZRangeBy{
				Min: strconv.FormatInt(s.lo, 10), Max: strconv.FormatInt(s.hi, 10)})
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "WRONGTYPE") {
		return nil, c.failure("read the run history", err)
	}
	// The runs of each pipeline by end, in the order Redis answers
	// (member order within one end, as the script saw them).
	byEnd := map[int]map[int64][]history.Record{}
	for _, i := range order {
		m := map[int64][]history.Record{}
		zs, _ := cmds[i].Result()
		for _, z := range zs {
			member, _ := z.Member.(string)
			if rec, ok := decodeRunMember(ids[i], member, z.Score); ok && f.Keep(rec) {
				m[int64(z.Score)] = append(m[int64(z.Score)], rec)
			}
		}
		byEnd[i] = m
	}
	runs := make([]history.Record, 0, len(hits))
	for _, h := range hits {
		list := byEnd[h.pipeline][h.score]
		if len(list) == 0 {
			continue // trimmed between the two reads
		}
		runs = append(runs, list[0])
		byEnd[h.pipeline][h.score] = list[1:]
	}
	return runs, nil
}
