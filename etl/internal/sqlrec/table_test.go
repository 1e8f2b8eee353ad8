package sqlrec

import (
	"slices"
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
