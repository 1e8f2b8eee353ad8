package templates

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRender500 renders a worker with 500 pipelines, the size of the
// agoragen benchmark package.
func BenchmarkRender500(b *testing.B) {
	w := Worker{PackagePath: "example.com/big", PackageName: "big", HasHealthPort: true, HealthPort: 8080}
	for i := range 500 {
		p := pipeline(fmt.Sprintf("p%d", i), fmt.Sprintf("BuildP%d", i), Schedule{Kind: Every, Interval: time.Minute})
		p.Result = TypeRef{Pointer: true, Elem: &TypeRef{Path: "example.com/big", PkgName: "big", Name: fmt.Sprintf("P%d", i)}}
		p.Backoff, p.MaxErrors = time.Duration(1+i%60)*time.Second, i%7
		w.Pipelines = append(w.Pipelines, p)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(w); err != nil {
			b.Fatal(err)
		}
	}
}
