package transform

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/sqlite"
	"github.com/agora-etl/agora/runtime"
)

// fuzzClasses are the value classes the fuzz target's records hold: the
// ones the file and SQLite sinks' encoders carry with one meaning today.
// NaN and ±Inf (JSON has no such number) and bytes (encoded as base64
// text, read back as a string) are left out until the encoders give them
// one documented representation.
var fuzzClasses = ValueClasses{Times: true, BigUints: true}

// FuzzTransformChains feeds random records through a random chain of
// transforms (filter, map, drop, keep, rename) into a file sink and a
// SQLite sink, with a dead-letter queue, and checks that every record is
// accounted for (in = out + dead-lettered + filtered, each record where a
// model of the chain says) and that what both sinks wrote, read back,
// equals what the model says the transforms produce. seed makes the
// records and the chain's fields; each byte of ops is one transform.
func FuzzTransformChains(f *testing.F) {
	f.Add(uint64(1), []byte{})
	f.Add(uint64(2), []byte{0, 1, 2, 3, 4})
	f.Add(uint64(3), []byte{5, 11, 27, 33, 64, 200})
	f.Add(uint64(4), []byte{1, 1, 1, 6, 16, 255, 128})
	f.Fuzz(func(t *testing.T, seed uint64, ops []byte) {
		if len(ops) > 8 {
			ops = ops[:8]
		}
		rng := rand.New(rand.NewPCG(seed, 27))
		in := make([]etl.Record, 1+rng.IntN(20))
		for i := range in {
			in[i] = RandomRecord(rng, fuzzClasses, 5, 2)
			in[i]["id"] = int64(i)
		}
		var chain []etl.Transform
		var model []modelStep
		for _, op := range ops {
			tr, step := fuzzStep(t, op, rng)
			chain, model = append(chain, tr), append(model, step)
		}
		doc, err := Map(map[string]string{"doc": "record"})
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, doc, Keep("id", "doc"))

		want := map[int64]map[string]any{}
		var wantDead, wantFiltered []int64
		for _, r := range in {
			id := r["id"].(int64)
			out, outcome := runModel(model, cloneDeep(r))
			switch outcome {
			case kept:
				want[id] = out
			case dead:
				wantDead = append(wantDead, id)
			case filtered:
				wantFiltered = append(wantFiltered, id)
			}
		}

		dir := t.TempDir()
		file, err := etl.NewFileSink(etl.FileSinkConfig{Path: filepath.Join(dir, "out.jsonl")})
		if err != nil {
			t.Fatal(err)
		}
		db, err := sqlite.Open(filepath.Join(dir, "out.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE t (id INTEGER, doc TEXT)"); err != nil {
			t.Fatal(err)
		}
		table, err := sqlite.NewSink(db, sqlite.SinkConfig{Table: "t", Columns: []string{"id", "doc"}, AllowUnfenced: true}, sqlite.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		dlq := &letters{}
		ctx, counts := runtime.ContextWithRecordCounts(context.Background())
		src := slices.Clone(in)
		for i := range src {
			src[i] = etl.Record(cloneDeep(src[i]))
		}
		p := etl.New(etl.NewIterableSource(src), []etl.Sink{file, table}, etl.WithDLQ(dlq), etl.WithTransforms(chain...), etl.WithBatchSize(1+rng.IntN(8)))
		if err := p.Run(ctx); err != nil {
			t.Fatalf("run: %v", err)
		}
		if err := file.Close(); err != nil {
			t.Fatal(err)
		}

		c := counts()
		if c.In != int64(len(in)) || c.In != c.Out+c.DeadLettered+c.Filtered ||
			c.Out != int64(len(want)) || c.DeadLettered != int64(len(wantDead)) || c.Filtered != int64(len(wantFiltered)) {
			t.Fatalf("counts %+v; the model: %d out, dead %v, filtered %v", c, len(want), wantDead, wantFiltered)
		}
		if got := dlq.ids(t); !slices.Equal(got, wantDead) {
			t.Fatalf("dead-lettered ids %v, want %v (%v)", got, wantDead, dlq.got)
		}
		fromFile := readJSONL(t, filepath.Join(dir, "out.jsonl"))
		fromTable := readTable(t, db)
		for _, got := range []map[int64]any{fromFile, fromTable} {
			if len(got) != len(want) {
				t.Fatalf("%d records written, want %d", len(got), len(want))
			}
			for id, w := range want {
				if g, ok := got[id]; !ok || !sameJSON(t, g, w) {
					t.Fatalf("record %d: written %s\nwant %s", id, mustJSON(t, got[id]), mustJSON(t, w))
				}
			}
		}
	})
}

type outcome int

const (
	kept outcome = iota
	dead
	filtered
)

// modelStep is what one transform of the chain does to a record, in Go.
type modelStep func(r map[string]any) (outcome, map[string]any)

func runModel(steps []modelStep, r map[string]any) (map[string]any, outcome) {
	for _, s := range steps {
		var o outcome
		if o, r = s(r); o != kept {
			return nil, o
		}
	}
	return r, kept
}

// fuzzStep builds the transform op says, with fields from rng, and its
// model. "id" is never dropped, renamed or set: it names the record.
func fuzzStep(t *testing.T, op byte, rng *rand.Rand) (etl.Transform, modelStep) {
	t.Helper()
	must := func(tr etl.Transform, err error) etl.Transform {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	f, g := RandomName(rng), RandomName(rng)
	sel := "record[" + quote(f) + "]"
	switch op % 5 {
	case 0:
		switch op / 5 % 4 {
		case 0:
			return must(Filter(quote(f) + " in record")), func(r map[string]any) (outcome, map[string]any) {
				_, has := r[f]
				return keepIf(has), r
			}
		case 1:
			return must(Filter("!(" + quote(f) + " in record)")), func(r map[string]any) (outcome, map[string]any) {
				_, has := r[f]
				return keepIf(!has), r
			}
		case 2:
			k := int64(2 + op%3)
			return must(Filter(fmt.Sprintf("record.id %% %d != 0", k))), func(r map[string]any) (outcome, map[string]any) {
				return keepIf(r["id"].(int64)%k != 0), r
			}
		default:
			return must(Filter(sel + " != null")), func(r map[string]any) (outcome, map[string]any) {
				v, has := r[f]
				if !has {
					return dead, nil
				}
				return keepIf(v != nil), r
			}
		}
	case 1:
		exprs := map[string]string{}
		var sets []func(in map[string]any) (any, bool)
		targets := []string{g}
		if op&0x20 != 0 && RandomName(rng) != g {
			targets = append(targets, RandomName(rng))
		}
		targets = slices.Compact(slices.Sorted(slices.Values(targets)))
		for i, target := range targets {
			expr, set := mapTemplate(int(op/5+byte(i))%5, f)
			exprs[target] = expr
			sets = append(sets, set)
		}
		return must(Map(exprs)), func(r map[string]any) (outcome, map[string]any) {
			vals := make([]any, len(targets))
			for i, set := range sets {
				v, ok := set(r)
				if !ok {
					return dead, nil
				}
				vals[i] = v
			}
			for i, target := range targets {
				if vals[i] == nil {
					delete(r, target)
				} else {
					r[target] = vals[i]
				}
			}
			return kept, r
		}
	case 2:
		return Drop(f), func(r map[string]any) (outcome, map[string]any) {
			delete(r, f)
			return kept, r
		}
	case 3:
		return Keep("id", f, g), func(r map[string]any) (outcome, map[string]any) {
			for k := range r {
				if k != "id" && k != f && k != g {
					delete(r, k)
				}
			}
			return kept, r
		}
	default:
		return must(Rename(map[string]string{f: g})), func(r map[string]any) (outcome, map[string]any) {
			if v, has := r[f]; has {
				delete(r, f)
				r[g] = v
			}
			return kept, r
		}
	}
}

// mapTemplate is a map expression reading field f and its model: the
// value it gives (nil: the field is removed), or false for a record it
// fails on.
func mapTemplate(n int, f string) (string, func(map[string]any) (any, bool)) {
	sel := "record[" + quote(f) + "]"
	read := func(r map[string]any) (any, bool) {
		v, has := r[f]
		return readAs(v), has
	}
	switch n {
	case 0:
		return sel, read
	case 1:
		return "[" + sel + ", null]", func(r map[string]any) (any, bool) {
			v, ok := read(r)
			return []any{v, nil}, ok
		}
	case 2:
		return "{'k': " + sel + ", 'z': [null]}", func(r map[string]any) (any, bool) {
			v, ok := read(r)
			return map[string]any{"k": v, "z": []any{nil}}, ok
		}
	case 3:
		return "record.id * 2", func(r map[string]any) (any, bool) { return r["id"].(int64) * 2, true }
	default:
		return "'s-' + string(record.id)", func(r map[string]any) (any, bool) {
			return "s-" + strconv.FormatInt(r["id"].(int64), 10), true
		}
	}
}

func keepIf(b bool) outcome {
	if b {
		return kept
	}
	return filtered
}

// cloneDeep copies a record with its lists and maps, so that the model's
// records and the pipeline's share nothing: a transform that changed a
// nested value in place would show as a difference.
func cloneDeep(r map[string]any) map[string]any { return deepCopy(r).(map[string]any) }

func deepCopy(v any) any {
	switch x := v.(type) {
	case etl.Record:
		return etl.Record(deepCopy(map[string]any(x)).(map[string]any))
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, el := range x {
			c[k] = deepCopy(el)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, el := range x {
			c[i] = deepCopy(el)
		}
		return c
	}
	return v
}

// letters is a dead-letter queue in memory.
type letters struct{ got []etl.Record }

func (l *letters) Write(_ context.Context, recs []etl.Record) error {
	l.got = append(l.got, recs...)
	return nil
}

func (l *letters) ids(t *testing.T) []int64 {
	t.Helper()
	var ids []int64
	for _, d := range l.got {
		var id any
		switch r := d[etl.DeadLetterRecord].(type) {
		case etl.Record:
			id = readAs(r["id"])
		case map[string]any:
			id = readAs(r["id"])
		}
		n, ok := id.(int64)
		if !ok {
			t.Fatalf("dead letter without its record's id: %v", d)
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	return ids
}

func readJSONL(t *testing.T, path string) map[int64]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[int64]any{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			ID  int64          `json:"id"`
			Doc map[string]any `json:"doc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if _, dup := out[rec.ID]; dup {
			t.Fatalf("record %d written twice", rec.ID)
		}
		out[rec.ID] = rec.Doc
	}
	return out
}

func readTable(t *testing.T, db *sql.DB) map[int64]any {
	t.Helper()
	rows, err := db.Query("SELECT id, doc FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]any{}
	for rows.Next() {
		var id int64
		var doc string
		if err := rows.Scan(&id, &doc); err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("row %d: %q: %v", id, doc, err)
		}
		if _, dup := out[id]; dup {
			t.Fatalf("row %d written twice", id)
		}
		out[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON reports whether got, a value read back from JSON, is want as
// JSON carries it: want is encoded and decoded the same way, and numbers
// compare by value.
func sameJSON(t *testing.T, got, want any) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal(mustJSON(t, want), &w); err != nil {
		t.Fatal(err)
	}
	return SameValue(jsonNumbers(t, got), jsonNumbers(t, w))
}

// jsonNumbers re-decodes v with its numbers as json.Number, which
// SameValue compares as the numbers they are.
func jsonNumbers(t *testing.T, v any) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(mustJSON(t, v)))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return normalizeNumbers(out)
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return readAs(x)
	case []any:
		for i := range x {
			x[i] = normalizeNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeNumbers(x[k])
		}
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%#v: %v", v, err)
	}
	return b
}
