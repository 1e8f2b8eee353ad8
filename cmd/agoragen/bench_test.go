package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/internal/gen"
)

// bigPackage returns the source of a package with n annotated factories,
// each with its own pipeline type, spread over files of 50.
func bigPackage(n int) map[string]string {
	files := map[string]string{}
	for f := 0; f*50 < n; f++ {
		var b strings.Builder
		b.WriteString("package big\n\nimport \"context\"\n")
		for i := f * 50; i < min(n, (f+1)*50); i++ {
			kind := []string{"every=1m", `cron="*/5 * * * *"`, "continuous", "once"}[i%4]
			fmt.Fprintf(&b, `
// P%[1]d is pipeline %[1]d.
type P%[1]d struct{ rows int }

// Run copies rows.
func (p *P%[1]d) Run(ctx context.Context) error { p.rows++; return ctx.Err() }

// BuildP%[1]d builds pipeline %[1]d.
//
//agora:schedule %[2]s backoff=%[3]ds max_errors=%[4]d
func BuildP%[1]d(ctx context.Context) (*P%[1]d, error) { return &P%[1]d{}, nil }
`, i, kind, 1+i%60, i%7)
		}
		files[fmt.Sprintf("big/p%02d.go", f)] = b.String()
	}
	return files
}

// BenchmarkGenerate500 times agoragen on a package of 500 annotated
// factories (load, scan, check, render, compare with the file on disk)
// beside the floor: a bare go/packages load of the same package with types.
// Both run in every iteration, so they see the same caches; the reported
// ratio is the median of agoragen/floor over the iterations.
func BenchmarkGenerate500(b *testing.B) {
	userModule(b, true, bigPackage(500))
	opts := gen.Options{Config: gen.Config{Patterns: []string{"./big"}}, Stdout: io.Discard, Stderr: io.Discard}
	if code := gen.Run(context.Background(), opts); code != 0 {
		b.Fatalf("agoragen exit %d", code)
	}
	floor := func() {
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, "./big")
		if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil || len(pkgs[0].Errors) > 0 {
			b.Fatalf("floor load: %v %v", err, pkgs)
		}
	}
	floor() // warm the build cache for both
	// Medians of per-iteration times and ratios: a busy machine slows some
	// iterations by several times, and a sum would report the noise.
	var floorTimes, genTimes, ratios []float64
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		floor()
		t1 := time.Now()
		if code := gen.Run(context.Background(), opts); code != 0 {
			b.Fatalf("agoragen exit %d", code)
		}
		f, g := t1.Sub(t0), time.Since(t1)
		floorTimes = append(floorTimes, float64(f.Microseconds())/1000)
		genTimes = append(genTimes, float64(g.Microseconds())/1000)
		ratios = append(ratios, float64(g)/float64(f))
	}
	b.ReportMetric(median(floorTimes), "floor-ms")
	b.ReportMetric(median(genTimes), "agoragen-ms")
	b.ReportMetric(median(ratios), "ratio")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
