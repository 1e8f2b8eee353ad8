package sqlrec

import (
	"errors"
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

func TestCheckReplace(t *testing.T) {
	cases := []struct {
		name string
		t    Table
		keys []string
	}{
		{"ok", Table{Name: "t", Mode: ModeReplace, SlotColumn: "slot"}, nil},
		{"ok with columns", Table{Name: "t", Mode: ModeReplace, SlotColumn: "slot", Columns: []string{"id"}}, nil},
		{"no slot_column", Table{Name: "t", Mode: ModeReplace}, []string{"slot_column"}},
		{"blank slot_column", Table{Name: "t", Mode: ModeReplace, SlotColumn: " "}, []string{"slot_column"}},
		{"slot_column among columns", Table{Name: "t", Mode: ModeReplace, SlotColumn: "slot", Columns: []string{"id", "Slot"}}, []string{"slot_column"}},
		{"key with replace", Table{Name: "t", Mode: ModeReplace, SlotColumn: "slot", Key: []string{"slot"}}, []string{"key"}},
		{"slot_column with insert", Table{Name: "t", SlotColumn: "slot"}, []string{"slot_column"}},
		{"slot_column with upsert", Table{Name: "t", Mode: ModeUpsert, Key: []string{"id"}, SlotColumn: "slot"}, []string{"slot_column"}},
		{"bad mode", Table{Name: "t", Mode: "merge"}, []string{"mode"}},
	}
	for _, c := range cases {
		err := c.t.Check("url", "x")
		var got []string
		for _, e := range splitJoined(err) {
			var fe *etl.FieldError
			if !errors.As(e, &fe) {
				t.Fatalf("%s: %v is not a FieldError", c.name, e)
			}
			got = append(got, fe.Key)
		}
		if !slices.Equal(got, c.keys) {
			t.Errorf("%s: problems with %v (%v), want %v", c.name, got, err, c.keys)
		}
	}
	if err := (Table{Name: "t", Mode: "merge"}).Check("url", "x"); !strings.Contains(err.Error(), `must be "insert", "upsert" or "replace", not "merge"`) {
		t.Errorf("bad mode: %v", err)
	}
}

func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestReplacesSlots(t *testing.T) {
	for mode, want := range map[string]bool{"": false, ModeInsert: false, ModeUpsert: true, ModeReplace: true} {
		if got := (Table{Mode: mode}).ReplacesSlots(); got != want {
			t.Errorf("mode %q: ReplacesSlots %v, want %v", mode, got, want)
		}
	}
	if got := strings.Join(Table{Name: "t", Mode: ModeReplace, SlotColumn: "slot"}.Describe(), " "); got != "table=t mode=replace slot_column=slot" {
		t.Errorf("Describe: %q", got)
	}
}

func TestCheckSlotField(t *testing.T) {
	recs := []etl.Record{{"id": 1}, {"id": 2, "Slot": "x"}}
	if err := CheckSlotField("sqlite", "t", recs, "slot", false); err != nil {
		t.Fatalf("case-sensitive: %v", err)
	}
	err := CheckSlotField("sqlite", "t", recs, "slot", true)
	if err == nil || !strings.Contains(err.Error(), `record 2 of the batch has a field "Slot"`) || !strings.Contains(err.Error(), "table t") {
		t.Fatalf("folded: %v", err)
	}
}
