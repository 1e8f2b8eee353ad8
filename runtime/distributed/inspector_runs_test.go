package distributed

import (
	"context"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

func TestInspectorRunsMergesFiltersAndLimits(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"a", "b"}, nil)
	ctx := context.Background()
	base := inspectAt.Unix()
	finishRun(t, cs[0], "a", base-300, history.OutcomeSucceeded, "", inspectAt.Add(-5*time.Minute))
	finishRun(t, cs[0], "b", base-200, history.OutcomeFailed, "boom", inspectAt.Add(-3*time.Minute))
	finishRun(t, cs[0], "a", base-100, history.OutcomeSucceeded, "", inspectAt.Add(-time.Minute))
	finishRun(t, cs[0], "gone", base-50, history.OutcomeSucceeded, "", inspectAt.Add(-30*time.Second)) // not run by a live worker now

	ends := func(q RunQuery) []int64 {
		t.Helper()
		runs, err := in.Runs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if runs == nil {
			t.Fatalf("Runs(%+v) = nil, want an empty list", q)
		}
		out := make([]int64, len(runs))
		for i, run := range runs {
			out[i] = run.RunNumber
		}
		return out
	}
	for _, tc := range []struct {
		q    RunQuery
		want []int64
	}{
		{RunQuery{}, []int64{base - 100, base - 200, base - 300}}, // the live pipelines, newest first
		{RunQuery{Limit: 2}, []int64{base - 100, base - 200}},
		{RunQuery{Failed: true}, []int64{base - 200}},
		{RunQuery{Since: 2 * time.Minute}, []int64{base - 100}},
		{RunQuery{PipelineIDs: []string{"a"}}, []int64{base - 100, base - 300}},
		{RunQuery{PipelineIDs: []string{"gone"}}, []int64{base - 50}},
		{RunQuery{PipelineIDs: []string{"nothing"}}, []int64{}},
	} {
		if got := ends(tc.q); len(got) != len(tc.want) || (len(got) > 0 && !equalInts(got, tc.want)) {
			t.Errorf("Runs(%+v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestInspectorRunsIsEmptyWithTheHistoryOff(t *testing.T) {
	r := newReal(t)
	opts := r.options(time.Minute)
	opts.RunHistory = history.Policy{Off: true}
	c := startCoordinator(t, opts, "w1", []string{"a"})
	finishRun(t, c, "a", time.Now().Unix(), history.OutcomeSucceeded, "", time.Now())
	in, err := NewInspector(context.Background(), Options{RedisURL: r.srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	runs, err := in.Runs(context.Background(), RunQuery{})
	if err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("Runs with the history off = %v, %v; want an empty list", runs, err)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
