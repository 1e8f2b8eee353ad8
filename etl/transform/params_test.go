package transform

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

func TestExpressionsReadParams(t *testing.T) {
	ctx := runtime.ContextWithParams(context.Background(), map[string]string{"day": "2026-01-01", "min": "10"})
	f, err := Filter(`record.day == params.day && record.n >= int(params["min"])`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		day  string
		n    int64
		keep bool
	}{{"2026-01-01", 12, true}, {"2026-01-01", 9, false}, {"2026-01-02", 12, false}} {
		r := etl.Record{"day": tc.day, "n": tc.n}
		_, keep, err := f.Apply(ctx, r)
		if err != nil || keep != tc.keep {
			t.Errorf("%v: keep %v, %v; want %v", r, keep, err, tc.keep)
		}
	}
	m, err := Map(map[string]string{"day": "params.day", "tag": `"run of " + params.day`, "n": "record.n"})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := m.Apply(ctx, etl.Record{"n": int64(1)})
	if err != nil || out["day"] != "2026-01-01" || out["tag"] != "run of 2026-01-01" {
		t.Fatalf("map: %v, %v", out, err)
	}
	// A run without the parameter fails the record, as a missing field does.
	if _, _, err := f.Apply(context.Background(), etl.Record{"day": "x", "n": int64(1)}); err == nil || !strings.Contains(err.Error(), "no such key") {
		t.Fatalf("no params: %v", err)
	}
}

func TestExpressionsListTheParamsTheyRead(t *testing.T) {
	f, _ := Filter(`params.b == "1" || params["a"] == params.b || has(params.c) || record.x == 1`)
	if got := f.(etl.ParamReader).RunParams(); !slices.Equal(got, []etl.ParamUse{{Key: "expr", Name: "a"}, {Key: "expr", Name: "b"}, {Key: "expr", Name: "c"}}) {
		t.Fatalf("filter: %v", got)
	}
	m, _ := Map(map[string]string{"x": "params.day", "y": "record.y", "z": `params[record.k]`})
	if got := m.(etl.ParamReader).RunParams(); !slices.Equal(got, []etl.ParamUse{{Key: "fields.x", Name: "day"}}) {
		t.Fatalf("map: %v", got)
	}
	g, _ := Filter(`record.x == 1`)
	if got := g.(etl.ParamReader).RunParams(); got != nil {
		t.Fatalf("no params: %v", got)
	}
}
