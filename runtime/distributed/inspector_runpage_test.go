package distributed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/redis/go-redis/v9"
)

// pageAll follows RunPage's cursors to the end.
func pageAll(t *testing.T, in *Inspector, q RunPageQuery) ([]history.Record, int) {
	t.Helper()
	var all []history.Record
	total := -1
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("RunPage's cursors never end")
		}
		p, err := in.RunPage(context.Background(), q)
		if err != nil {
			t.Fatalf("RunPage(%+v): %v", q, err)
		}
		if total >= 0 && p.Total != total {
			t.Errorf("Total changed between pages: %d then %d", total, p.Total)
		}
		total = p.Total
		if len(p.Runs) > q.Limit {
			t.Fatalf("a page of %d runs, limit %d", len(p.Runs), q.Limit)
		}
		all = append(all, p.Runs...)
		if p.Next == "" {
			return all, total
		}
		q.Cursor = p.Next
	}
}

func TestRunPageAgreesWithFilteringTheWholeHistory(t *testing.T) {
	r := newReal(t)
	ids := []string{"a", "b", "c"}
	cs, in := r.inspected([]string{"w1"}, ids, nil)
	seedHistories(t, cs[0], ids)
	ctx := context.Background()
	hist, err := cs[0].RunHistories(ctx, ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	filters := []RunFilter{
		{},
		{Failed: true},
		{Outcomes: []history.Outcome{history.OutcomeStale, history.OutcomeCancelled}},
		{Worker: "w2"},
		{Worker: "w3"},
		{Text: "timeout"},
		{Text: "<DB> &"},
		{Text: "é"},
		{From: inspectAt.Add(-5 * time.Minute), To: inspectAt.Add(-2 * time.Minute)},
		{PipelineIDs: []string{"b"}, Failed: true, Text: "quoted"},
		{PipelineIDs: []string{"gone"}},
	}
	for _, f := range filters {
		var want []history.Record
		for i, id := range ids {
			if len(f.PipelineIDs) > 0 && !contains(f.PipelineIDs, id) {
				continue
			}
			for _, run := range hist[i] {
				if f.Keep(run) {
					want = append(want, run)
				}
			}
		}
		sortRuns(want)
		for _, limit := range []int{1, 3, 500} {
			got, total := pageAll(t, in, RunPageQuery{RunFilter: f, Limit: limit})
			if total != len(want) {
				t.Errorf("filter %+v: Total %d, want %d", f, total, len(want))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("filter %+v, limit %d: pages give\n%s\nwant\n%s", f, limit, describe(got), describe(want))
			}
		}
	}
}

// sortRuns orders runs as RunPage does: newest end first, then pipeline.
func sortRuns(runs []history.Record) {
	for i := 1; i < len(runs); i++ {
		for j := i; j > 0; j-- {
			a, b := runs[j-1], runs[j]
			if a.End.After(b.End) || (a.End.Equal(b.End) && a.PipelineID <= b.PipelineID) {
				break
			}
			runs[j-1], runs[j] = b, a
		}
	}
}

func describe(runs []history.Record) string {
	s := ""
	for _, r := range runs {
		s += fmt.Sprintf("  %s %d %s %s\n", r.PipelineID, r.RunNumber, r.End.Format(time.TimeOnly), r.Outcome)
	}
	return s
}

func TestRunPageSendsOnlyThePage(t *testing.T) {
	r := newReal(t)
	ids := []string{"a", "b", "c", "d"}
	cs, in := r.inspected([]string{"w1"}, ids, nil)
	seedHistories(t, cs[0], ids)
	hook := &replyBytes{}
	in.c.client.AddHook(hook)
	if _, err := in.RunPage(context.Background(), RunPageQuery{Limit: 2}); err != nil {
		t.Fatal(err)
	}
	// Two members of about 60 bytes, one end per match per pipeline and
	// the counts: far below the 60 members the histories hold.
	if hook.members > 4 {
		t.Errorf("RunPage of 2 runs received %d members", hook.members)
	}
}

// replyBytes counts the history members the client receives.
type replyBytes struct{ members int }

func (h *replyBytes) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *replyBytes) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *replyBytes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if z, ok := c.(*redis.ZSliceCmd); ok {
				h.members += len(z.Val())
			}
		}
		return err
	}
}

func TestRunPageRefusesBadQueries(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	for _, q := range []RunPageQuery{
		{Limit: 0},
		{Limit: MaxPageSize + 1},
		{Limit: 10, Cursor: "yesterday"},
		{Limit: 10, RunFilter: RunFilter{From: inspectAt, To: inspectAt.Add(-time.Hour)}},
	} {
		if _, err := in.RunPage(context.Background(), q); !errors.Is(err, ErrBadQuery) {
			t.Errorf("RunPage(%+v) = %v, want ErrBadQuery", q, err)
		}
	}
}
