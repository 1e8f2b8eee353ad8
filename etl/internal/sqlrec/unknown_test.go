package sqlrec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestFitColumnsRejectsRecordsWithUnknownFields(t *testing.T) {
	table := map[string]bool{"id": true, "name": true}
	known := func(c string) bool { return table[c] }
	recs := []etl.Record{{"id": 1, "name": "a"}, {"id": 2, "extra": 1}, {"id": 3}, {"zz": 1, "extra": 2}}

	f := FitColumns("events", nil, recs, known, "")
	if !slices.Equal(f.Cols, []string{"id", "name"}) || !slices.Equal(f.Keep, []int{0, 2}) {
		t.Fatalf("reject: cols %v keep %v", f.Cols, f.Keep)
	}
	if len(f.Rejections) != 2 || f.Unknown != 2 || f.Rejections[0].Index != 1 || f.Rejections[1].Index != 3 {
		t.Fatalf("rejections %v", f.Rejections)
	}
	if err := f.Rejections[0].Err; !errors.Is(err, etl.ErrUnknownField) || !strings.Contains(err.Error(), `table events has no column named "extra"`) {
		t.Fatalf("error %v", err)
	}
	if err := f.Rejections[1].Err.Error(); !strings.Contains(err, `no columns named "extra", "zz"`) {
		t.Fatalf("two fields: %v", err)
	}

	f = FitColumns("events", nil, recs, known, UnknownIgnore)
	if !slices.Equal(f.Cols, []string{"id", "name"}) || !slices.Equal(f.Keep, []int{0, 1, 2}) || len(f.Rejections) != 1 || f.Rejections[0].Index != 3 {
		t.Fatalf("ignore: cols %v keep %v rejections %v", f.Cols, f.Keep, f.Rejections)
	}
	if err := f.Rejections[0].Err; !errors.Is(err, etl.ErrUnknownField) || !strings.Contains(err.Error(), "has none of the record's fields") {
		t.Fatalf("ignore, no known field: %v", err)
	}

	f = FitColumns("events", nil, recs[:1], known, "")
	if f.Keep != nil || f.Rejections != nil || f.Len(1) != 1 {
		t.Fatalf("all fit: %+v", f)
	}
}

func TestFitColumnsConfiguredOrUnknownTableKeepsEverything(t *testing.T) {
	recs := []etl.Record{{"id": 1, "extra": 1}}
	if f := FitColumns("t", []string{"id"}, recs, func(string) bool { return false }, ""); !slices.Equal(f.Cols, []string{"id"}) || f.Rejections != nil {
		t.Fatalf("configured: %+v", f)
	}
	if f := FitColumns("t", nil, recs, nil, ""); !slices.Equal(f.Cols, []string{"extra", "id"}) || f.Rejections != nil {
		t.Fatalf("table not known: %+v", f)
	}
}

func TestCheckOnUnknownField(t *testing.T) {
	tbl := Table{Name: "t", OnUnknownField: "drop"}
	err := tbl.Check("url", "x")
	var fe *etl.FieldError
	if !errors.As(err, &fe) || fe.Key != "on_unknown_field" {
		t.Fatalf("err = %v", err)
	}
	for _, v := range []string{"", UnknownReject, UnknownIgnore} {
		if err := (Table{Name: "t", OnUnknownField: v}).Check("url", "x"); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
	}
}

func TestLastPerKeyInAndMergeRejections(t *testing.T) {
	recs := []etl.Record{{"id": 1}, {"id": 2}, {"id": 1}, {"id": 3}}
	if got := LastPerKeyIn(recs, []int{0, 1, 3}, []string{"id"}); !slices.Equal(got, []int{0, 1, 3}) {
		t.Fatalf("no repeat among idx: %v", got)
	}
	if got := LastPerKeyIn(recs, []int{0, 2, 3}, []string{"id"}); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("repeat: %v", got)
	}
	m := MergeRejections([]etl.Rejection{{Index: 1}, {Index: 4}}, []etl.Rejection{{Index: 2}})
	if len(m) != 3 || m[0].Index != 1 || m[1].Index != 2 || m[2].Index != 4 {
		t.Fatalf("merged %v", m)
	}
}
