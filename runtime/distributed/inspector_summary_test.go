package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/redis/go-redis/v9"
)

// seedHistories writes, straight into Redis, a history for each of ids in
// every shape a reader meets: positional members of each outcome (with
// errors needing escapes), a record in RunRecord's own JSON, members that
// are not records, runs ending in the same millisecond on several
// pipelines.
func seedHistories(t *testing.T, c *RedisWorkerCoordinator, ids []string) {
	t.Helper()
	ctx := context.Background()
	outcomes := []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed, history.OutcomeStale, history.OutcomeCancelled, history.OutcomeSlotDone}
	errs := []string{"", "load: Timeout <db> & \"quoted\"", "fencing: stale writer", "ctx cancelled: é", ""}
	for n, id := range ids {
		key := c.keys.done(id)
		var zs []redis.Z
		for i := range 12 + n {
			k := (i + n) % len(outcomes)
			rec := history.Record{PipelineID: id, RunNumber: int64(1000 + i), WorkerID: []string{"w1", "w2"}[i%2],
				Duration: time.Duration(i+1) * time.Second, Outcome: outcomes[k], Error: errs[k],
				End: inspectAt.Add(-time.Duration(i) * time.Minute)}
			zs = append(zs, redis.Z{Score: float64(rec.End.UnixMilli()), Member: encodeRunMember(&rec)})
		}
		obj, _ := json.Marshal(history.Record{PipelineID: id, RunNumber: 7, WorkerID: "w3", Outcome: history.OutcomeFailed,
			Error: "OLD object TIMEOUT", End: inspectAt.Add(-90 * time.Second), Duration: time.Second})
		zs = append(zs,
			redis.Z{Score: float64(inspectAt.Add(-90 * time.Second).UnixMilli()), Member: string(obj)},
			redis.Z{Score: float64(inspectAt.Add(-30 * time.Second).UnixMilli()), Member: `{"a":1,"outcome":7}`},
			redis.Z{Score: float64(inspectAt.Add(-31 * time.Second).UnixMilli()), Member: `[1,2]`},
			redis.Z{Score: float64(inspectAt.Add(-32 * time.Second).UnixMilli()), Member: `not json`},
			redis.Z{Score: float64(inspectAt.Unix()), Member: doneMember}, // the slot, scored in seconds
		)
		if err := c.client.ZAdd(ctx, key, zs...).Err(); err != nil {
			t.Fatal(err)
		}
		// The fleet's failure state shares the set, scored above every
		// run (fail.lua): the first pipeline stopped after 3 failed runs,
		// the second counts 2 with its backoff over.
		var fz []redis.Z
		switch n {
		case 0:
			fz = []redis.Z{{Score: failBand + 3, Member: failsMember}, {Score: failBand, Member: failUntilMember}}
		case 1:
			fz = []redis.Z{{Score: failBand + 2, Member: failsMember}, {Score: float64(failBand + inspectAt.Add(-time.Hour).UnixMilli()), Member: failUntilMember}}
		default:
			fz = nil
		}
		if fz != nil {
			if err := c.client.ZAdd(ctx, key, fz...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.client.HSet(ctx, c.keys.failure(id), "error", "sink down").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSummariesAgreeWithOverviewButForWhatEveryRunTells(t *testing.T) {
	r := newReal(t)
	ids := []string{"a", "b", "c", "d", "e", "f"}
	cs, in := r.inspected([]string{"w1", "w2"}, ids, map[string]string{"a": `every="1m"`, "b": `cron="0 * * * *"`})
	seedHistories(t, cs[0], ids[:5]) // f has no history
	ctx := context.Background()
	if _, err := in.Pause(ctx, "c", "test"); err != nil {
		t.Fatal(err)
	}
	if err := cs[0].Pause(ctx, "retired", "test"); err != nil {
		t.Fatal(err)
	}
	want, err := in.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := in.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pipelines) != 7 {
		t.Fatalf("Summaries has %d pipelines, want 7 (six live, one paused)", len(got.Pipelines))
	}
	seen := map[history.Outcome]bool{}
	for i := range want.Pipelines {
		seen[want.Pipelines[i].LastOutcome] = true
		if got.Pipelines[i].LastSuccess != nil || got.Pipelines[i].StaleRefusals != 0 {
			t.Errorf("pipeline %s: Summaries filled LastSuccess or StaleRefusals: %+v", want.Pipelines[i].PipelineID, got.Pipelines[i])
		}
		want.Pipelines[i].LastSuccess, want.Pipelines[i].StaleRefusals = nil, 0
		if !reflect.DeepEqual(got.Pipelines[i], want.Pipelines[i]) {
			t.Errorf("pipeline %s:\nSummaries %+v\nOverview  %+v", want.Pipelines[i].PipelineID, got.Pipelines[i], want.Pipelines[i])
		}
	}
	if a := got.Pipelines[0]; !a.FailedStop || a.ConsecutiveErrors != 3 || a.NextRun != nil || a.LastOutcome == "" {
		t.Errorf("a, stopped after 3 failed runs: %+v", a)
	}
	if b := got.Pipelines[1]; b.FailedStop || b.ConsecutiveErrors != 2 || b.BackoffUntil != nil || b.NextRun == nil || b.LastOutcome == "" {
		t.Errorf("b, 2 failed runs, backoff over: %+v", b)
	}
	if len(seen) < 4 {
		t.Errorf("the seeded last outcomes cover only %v; the test would not tell the outcomes apart", seen)
	}
	if !reflect.DeepEqual(got.Workers, want.Workers) {
		t.Errorf("workers differ: %+v vs %+v", got.Workers, want.Workers)
	}
}

func TestSummariesSkipAHistoryKeyOfTheWrongType(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"a", "b"}, nil)
	seedHistories(t, cs[0], []string{"a"})
	if err := cs[0].client.Set(context.Background(), cs[0].keys.done("b"), "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	o, err := in.Summaries(context.Background())
	if err != nil {
		t.Fatalf("Summaries with a string at b's history key: %v", err)
	}
	if len(o.Pipelines) != 2 || o.Pipelines[0].LastOutcome == "" || o.Pipelines[1].LastOutcome != "" {
		t.Errorf("Summaries = %+v", o.Pipelines)
	}
}

func TestPipelineReadsOnePipelineAsOverviewShowsIt(t *testing.T) {
	r := newReal(t)
	ids := []string{"a", "b"}
	cs, in := r.inspected([]string{"w1"}, ids, map[string]string{"a": `every="1m"`})
	seedHistories(t, cs[0], ids)
	ctx := context.Background()
	o, err := in.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, runs, found, err := in.Pipeline(ctx, "a")
	if err != nil || !found {
		t.Fatalf("Pipeline(a) = found %v, %v", found, err)
	}
	if !reflect.DeepEqual(info, o.Pipelines[0]) {
		t.Errorf("Pipeline(a) = %+v, Overview says %+v", info, o.Pipelines[0])
	}
	hist, _ := cs[0].RunHistory(ctx, "a", 0)
	if !reflect.DeepEqual(runs, hist) {
		t.Errorf("Pipeline(a)'s runs are not its history: %d vs %d", len(runs), len(hist))
	}
	if _, _, found, err := in.Pipeline(ctx, "nope"); found || err != nil {
		t.Errorf("Pipeline(nope) = found %v, %v; want not found", found, err)
	}
}

func TestOverviewPageFiltersAndPages(t *testing.T) {
	o := Overview{Pipelines: []PipelineInfo{
		{PipelineID: "Orders", Workers: []string{"w1"}, LastOutcome: history.OutcomeFailed},
		{PipelineID: "orders-eu", Workers: []string{"w2"}, LastOutcome: history.OutcomeSucceeded, Paused: true},
		{PipelineID: "loader", Workers: []string{"w1", "w2"}},
		{PipelineID: "orders-us", Workers: []string{"w1"}, LastOutcome: history.OutcomeFailed},
	}}
	ids := func(p PipelinePage) []string {
		var out []string
		for _, r := range p.Pipelines {
			out = append(out, r.PipelineID)
		}
		return out
	}
	for _, tc := range []struct {
		f             PipelineFilter
		offset, limit int
		want          []string
		total         int
	}{
		{PipelineFilter{}, 0, 2, []string{"Orders", "orders-eu"}, 4},
		{PipelineFilter{}, 2, 2, []string{"loader", "orders-us"}, 4},
		{PipelineFilter{}, 4, 2, nil, 4},
		{PipelineFilter{Text: "ORDERS"}, 0, 10, []string{"Orders", "orders-eu", "orders-us"}, 3},
		{PipelineFilter{Worker: "w2"}, 0, 10, []string{"orders-eu", "loader"}, 2},
		{PipelineFilter{Outcome: history.OutcomeFailed}, 1, 10, []string{"orders-us"}, 2},
		{PipelineFilter{Outcome: OutcomeNone}, 0, 10, []string{"loader"}, 1},
		{PipelineFilter{Paused: true, Text: "eu"}, 0, 10, []string{"orders-eu"}, 1},
	} {
		p, err := o.Page(tc.f, tc.offset, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(p), tc.want) || p.Total != tc.total {
			t.Errorf("Page(%+v, %d, %d) = %v of %d, want %v of %d", tc.f, tc.offset, tc.limit, ids(p), p.Total, tc.want, tc.total)
		}
	}
	for _, bad := range [][2]int{{0, 0}, {0, MaxPageSize + 1}, {-1, 10}} {
		if _, err := o.Page(PipelineFilter{}, bad[0], bad[1]); err == nil {
			t.Errorf("Page(offset %d, limit %d) did not fail", bad[0], bad[1])
		}
	}
}

func TestSummariesReadEveryBatchOfPipelines(t *testing.T) {
	r := newReal(t)
	var ids []string
	for i := range 2*summaryChunk + 17 {
		ids = append(ids, fmt.Sprintf("p%03d", i))
	}
	cs, in := r.inspected([]string{"w1"}, ids, nil)
	ctx := context.Background()
	for i, id := range ids {
		rec := history.Record{PipelineID: id, RunNumber: int64(i + 1), WorkerID: "w1", Duration: time.Second,
			Outcome: []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed}[i%2], End: inspectAt.Add(-time.Minute)}
		if i%2 == 1 {
			rec.Error = id
		}
		if err := cs[0].client.ZAdd(ctx, cs[0].keys.done(id), redis.Z{Score: float64(rec.End.UnixMilli()), Member: encodeRunMember(&rec)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	o, err := in.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Pipelines) != len(ids) {
		t.Fatalf("%d rows, want %d", len(o.Pipelines), len(ids))
	}
	for i, row := range o.Pipelines {
		want := []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed}[i%2]
		if row.PipelineID != ids[i] || row.LastOutcome != want || (i%2 == 1 && row.LastError != ids[i]) {
			t.Errorf("row %d = %s %s %q, want %s %s", i, row.PipelineID, row.LastOutcome, row.LastError, ids[i], want)
		}
	}
}
