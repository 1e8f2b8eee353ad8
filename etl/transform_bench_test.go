package etl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/transform"
)

type discardSink struct{}

func (discardSink) Write(context.Context, []etl.Record) error { return nil }

// Expressions of BenchmarkTransforms.
const (
	benchFilter = "record.amount > 0"
	benchTotal  = "double(record.amount) * 1.2"
	benchDay    = "string(record.at).substring(0, 10)"
)

// BenchmarkTransforms moves in-memory records (as the JSON decoder gives
// them) through a pipeline with no transform and with a filter plus a map
// of two fields, alternating in the same run, and reports the time per
// record of each and their ratio, by the wall clock and by this process's
// CPU time (on a loaded machine the wall clock mostly measures the other
// tenants).
//
// Beside them, in the same run, it measures the least CEL itself costs
// for these expressions (cel-only): the filter, and the map's two
// expressions as one program (as transform.Map evaluates them), compiled
// with the same options, evaluated in a loop against activations built
// beforehand, over records whose values CEL takes as they are (float64,
// string): no number parsing, no result conversion, no record update, no
// pipeline. bound-ratio, (plain + cel-only) / plain, is the best ratio
// any design that evaluates these expressions with cel-go can reach.
func BenchmarkTransforms(b *testing.B) {
	const n = 20000
	mk := func() []etl.Record {
		recs := make([]etl.Record, n)
		for i := range recs {
			recs[i] = etl.Record{"id": json.Number("12345"), "amount": json.Number("12.5"), "at": "2026-03-01T10:00:00Z", "name": benchName}
		}
		return recs
	}
	f, err := transform.Filter(benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	m, err := transform.Map(map[string]string{"total": benchTotal, "day": benchDay})
	if err != nil {
		b.Fatal(err)
	}
	celOnly := celOnlyLoop(b, n)
	type side struct{ wall, cpu time.Duration }
	var plain, transformed, cel side
	measure := func(s *side, fn func()) {
		c0, w0 := processCPU(), time.Now()
		fn()
		s.wall += time.Since(w0)
		s.cpu += processCPU() - c0
	}
	run := func(s *side, opts ...etl.Option) {
		recs := mk()
		measure(s, func() {
			if err := etl.New(etl.NewIterableSource(recs), []etl.Sink{discardSink{}}, opts...).Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.ResetTimer()
	for b.Loop() {
		run(&plain)
		run(&transformed, etl.WithTransforms(f, m))
		measure(&cel, celOnly)
	}
	per := float64(n) * float64(b.N)
	b.ReportMetric(float64(plain.wall.Nanoseconds())/per, "plain-ns/record")
	b.ReportMetric(float64(transformed.wall.Nanoseconds())/per, "filter+map-ns/record")
	b.ReportMetric(float64(cel.wall.Nanoseconds())/per, "cel-only-ns/record")
	b.ReportMetric(float64(transformed.wall)/float64(plain.wall), "ratio")
	b.ReportMetric(float64(plain.wall+cel.wall)/float64(plain.wall), "bound-ratio")
	b.ReportMetric(float64(plain.cpu.Nanoseconds())/per, "plain-cpu-ns/record")
	b.ReportMetric(float64(transformed.cpu.Nanoseconds())/per, "filter+map-cpu-ns/record")
	b.ReportMetric(float64(cel.cpu.Nanoseconds())/per, "cel-only-cpu-ns/record")
}

// celOnlyLoop returns a function that evaluates the benchmark's filter and
// map (one program of both fields) over n records whose activations are
// built here, once.
func celOnlyLoop(b *testing.B, n int) func() {
	b.Helper()
	env, err := cel.NewEnv(
		cel.Variable(transform.RecordVar, cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
	)
	if err != nil {
		b.Fatal(err)
	}
	program := func(expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			b.Fatal(iss.Err())
		}
		prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			b.Fatal(err)
		}
		return prg
	}
	filter, both := program(benchFilter), program("["+benchTotal+", "+benchDay+"]")
	acts := make([]interpreter.Activation, n)
	for i := range acts {
		acts[i], err = interpreter.NewActivation(map[string]any{
			transform.RecordVar: map[string]any{"id": int64(12345), "amount": 12.5, "at": "2026-03-01T10:00:00Z", "name": benchName},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return func() {
		for _, act := range acts {
			if out, _, err := filter.Eval(act); err != nil || out.Value() != true {
				b.Fatalf("filter: %v, %v", out, err)
			}
			if _, _, err := both.Eval(act); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFileTransforms is the file (jsonl) → file (jsonl) record
// pipeline of BenchmarkFileJSONLToFile, 200,000 records with the fields of
// BenchmarkTransforms, run with the filter and map (the "pipeline" side)
// and without a transform (the "hand" side) in the same benchmark:
// cpu-pipeline/hand is the transformed pipeline's speed as a fraction of
// the plain one's, by CPU time.
func BenchmarkFileTransforms(b *testing.B) {
	const n = 200_000
	in := filepath.Join(b.TempDir(), "in.jsonl")
	out := filepath.Join(b.TempDir(), "out.jsonl")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "{\"id\":%d,\"amount\":12.5,\"at\":\"2026-03-01T10:00:00Z\",\"name\":%q}\n", i, benchName)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	filter, err := transform.Filter(benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	m, err := transform.Map(map[string]string{"total": benchTotal, "day": benchDay})
	if err != nil {
		b.Fatal(err)
	}
	run := func(opts ...etl.Option) {
		os.Remove(out)
		src, err := etl.NewFileSource(etl.FileSourceConfig{Path: in})
		if err != nil {
			b.Fatal(err)
		}
		sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: out})
		if err != nil {
			b.Fatal(err)
		}
		if err := etl.New(src, []etl.Sink{sink}, opts...).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	sideBySide(b, n, nil,
		func(func(func())) { run(etl.WithTransforms(filter, m)) },
		func(func(func())) { run() })
}
