package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

// TestValueKeepsBigIntegersExact: an integer beyond 64 bits goes to
// PostgreSQL as its digits (a numeric or text column keeps it exactly),
// never as a rounded float64; an integer column refuses it.
func TestValueKeepsBigIntegersExact(t *testing.T) {
	for _, c := range []struct {
		in      json.Number
		integer bool
		want    any
		err     string
	}{
		{"42", false, int64(42), ""},
		{"0.5", false, 0.5, ""},
		{"99999999999999999999", false, "99999999999999999999", ""},
		{"-99999999999999999999", false, "-99999999999999999999", ""},
		{"99999999999999999999", true, nil, "does not fit a 64-bit integer column"},
		{"1.5", true, nil, "is not an integer"},
		{"1e400", false, nil, `number "1e400"`},
	} {
		got, err := value(c.in, c.integer)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("value(%s, %v) = %v, %v; want an error saying %q", c.in, c.integer, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("value(%s, %v) = %#v, %v; want %#v", c.in, c.integer, got, err, c.want)
		}
	}
}

// TestSinkKeepsIntegersBeyond64BitsExact: a JSON integer beyond 64 bits
// lands in a numeric and a text column as its digits, unrounded; a
// bigint column refuses its record.
func TestSinkKeepsIntegersBeyond64BitsExact(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE big (id bigint PRIMARY KEY, n numeric, s text)")
	sink := db.NewSink(t, sinktest.Config{Table: "big"})
	recs := []etl.Record{
		{"id": json.Number("1"), "n": json.Number("99999999999999999999"), "s": json.Number("-123456789012345678901234567890")},
		{"id": json.Number("99999999999999999999")},
	}
	err := sink.Write(sinktest.Leased(1), recs)
	var rej *etl.RejectedError
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 ||
		!strings.Contains(rej.Rejections[0].Err.Error(), "does not fit a 64-bit integer column") {
		t.Fatalf("err = %v, want record 1 rejected for not fitting bigint", err)
	}
	var n, s string
	if err := pool.QueryRow(context.Background(), "SELECT n::text, s FROM big WHERE id = 1").Scan(&n, &s); err != nil {
		t.Fatal(err)
	}
	if n != "99999999999999999999" || s != "-123456789012345678901234567890" {
		t.Fatalf("stored n = %s, s = %s; want the digits unrounded", n, s)
	}
}
