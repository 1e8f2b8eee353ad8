package transform

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// TestIdentityTransformsKeepEveryValue is the property test of issue 27:
// random records (nested nulls, numbers at the int64 and float64 edges,
// NaN and ±Inf, uints, unicode, bytes, timestamps, lists of maps in maps)
// through a filter that keeps them and through identity maps (the record
// whole, each field, each field in a list and in a map) come out equal to
// what went in.
func TestIdentityTransformsKeepEveryValue(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 27))
	f, err := Filter("size(record) >= 0")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Map(map[string]string{"__copy": "record"})
	if err != nil {
		t.Fatal(err)
	}
	fieldMaps := map[string]etl.Transform{}
	for _, name := range []string{"a", "b", "c", "amount", "tags", "n", "é", "x_1", "日本"} {
		m, err := Map(map[string]string{"__v": "record[" + quote(name) + "]", "__l": "[record[" + quote(name) + "], null]", "__m": "{'k': record[" + quote(name) + "], 'z': null}"})
		if err != nil {
			t.Fatal(err)
		}
		fieldMaps[name] = m
	}
	for i := range 2000 {
		in := RandomRecord(rng, AllValueClasses, 6, 3)
		r, keep, err := f.Apply(t.Context(), clone(in))
		if err != nil || !keep || !SameValue(map[string]any(r), map[string]any(in)) {
			t.Fatalf("record %d %#v: filter gave %#v, %v, %v", i, in, r, keep, err)
		}
		r, _, err = whole.Apply(t.Context(), clone(in))
		if err != nil || !SameValue(r["__copy"], map[string]any(in)) {
			t.Fatalf("record %d %#v: record as a value gave %#v, %v", i, in, r["__copy"], err)
		}
		for _, name := range slices.Sorted(maps.Keys(in)) {
			v := in[name]
			r, _, err := fieldMaps[name].Apply(t.Context(), clone(in))
			if err != nil {
				t.Fatalf("record %d field %s %#v: %v", i, name, v, err)
			}
			if v != nil && !SameValue(r["__v"], v) {
				t.Fatalf("record %d field %s: %#v came out %#v", i, name, v, r["__v"])
			}
			if _, has := r["__v"]; v == nil && has {
				t.Fatalf("record %d field %s: null set the field", i, name)
			}
			if !SameValue(r["__l"], []any{v, nil}) || !SameValue(r["__m"], map[string]any{"k": v, "z": nil}) {
				t.Fatalf("record %d field %s: %#v came out %#v in a list, %#v in a map", i, name, v, r["__l"], r["__m"])
			}
		}
	}
}

func quote(s string) string { return "'" + s + "'" }
