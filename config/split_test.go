package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestDecodeDocumentIsTheWholeDecoding: split or not, decodeDocument gives
// what go-toml gives for the whole file, errors included.
func TestDecodeDocumentIsTheWholeDecoding(t *testing.T) {
	big := string(manyPipelines(splitThreshold + 6))
	cases := map[string]string{
		"plain":                 big,
		"worker after":          big + "\n[worker.extra]\nx = 1\n",
		"interleaved":           big + "\n[pipelines.p1.more]\nx = 1\n[pipelines.p2.more]\ny = 2\n",
		"duplicate table":       big + "\n[pipelines.p3.source]\ntype = \"x\"\n",
		"dotted key elsewhere":  strings.Replace(big, "[worker]\n", "[worker]\n[pipelines]\np4.batch_size = 1\n", 1),
		"dotted key same value": strings.Replace(big, "health_port = 8080\n", "health_port = 8080\n[pipelines]\nnew.batch_size = 1\n", 1),
		"array of pipelines":    big + "\n[[pipelines]]\nx = 1\n",
		"syntax error":          big + "\n[pipelines.p5\n",
		"few pipelines":         string(manyPipelines(3)),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			var want map[string]any
			wantErr := tomlUnmarshal([]byte(src), &want)
			got, err := decodeDocument([]byte(src))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatal("document differs from go-toml's decoding of the whole file")
			}
		})
	}
}

// TestDecodeDocumentIsLinear: ten times the pipelines take about ten times
// as long, not a hundred (go-toml alone: a 4,000-pipeline file took over
// ten times longer per pipeline than a 400-pipeline one).
func TestDecodeDocumentIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	perPipeline := func(n int) time.Duration {
		data := manyPipelines(n)
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if _, err := decodeDocument(data); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best / time.Duration(n)
	}
	small, large := perPipeline(400), perPipeline(4000)
	if large > 4*small {
		t.Fatalf("%s per pipeline at 4,000 pipelines, %s at 400: not linear", large, small)
	}
}
