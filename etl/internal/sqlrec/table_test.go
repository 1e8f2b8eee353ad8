package sqlrec

import (
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestColumnsAreTheFieldUnionUnlessConfigured(t *testing.T) {
	recs := []etl.Record{{"b": 1, "a": 2}, {"c": 3}}
	if got := Columns(nil, recs); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("derived %v", got)
	}
	if got := Columns([]string{"c"}, recs); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("configured %v", got)
	}
}

func TestLastPerKeyKeepsTheLastRecordOfEachKey(t *testing.T) {
	recs := []etl.Record{{"id": 1.0, "v": "a"}, {"id": 2.0}, {"id": 1.0, "v": "b"}, {"id": 3.0}}
	if got := LastPerKey(recs, []string{"id"}); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("kept %v", got)
	}
	if got := LastPerKey(recs[:2], []string{"id"}); got != nil {
		t.Fatalf("no duplicates: %v, want nil", got)
	}
}

func TestQuoteIdent(t *testing.T) {
	if got := QuoteIdent(`public.or"ders`); got != `"public"."or""ders"` {
		t.Fatal(got)
	}
}

func TestDescribeShowsTableModeAndKey(t *testing.T) {
	for _, c := range []struct {
		t    Table
		want string
	}{
		{Table{Name: "orders"}, "table=orders mode=insert"},
		{Table{Name: "s.orders", Mode: ModeUpsert, Key: []string{"id", "region"}, Resource: "r"}, "table=s.orders mode=upsert key=id,region"},
	} {
		if got := strings.Join(c.t.Describe(), " "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}
