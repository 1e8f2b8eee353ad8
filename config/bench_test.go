package config

import (
	"fmt"
	"strings"
	"testing"
)

// manyPipelines is an agora/v1 file with n pipelines of every kind of table.
func manyPipelines(n int) []byte {
	var b strings.Builder
	b.WriteString("format = \"agora/v1\"\n[worker]\nhealth_port = 8080\n")
	for i := range n {
		fmt.Fprintf(&b, `
[pipelines.p%d]
batch_size = 100
error_backoff = "30s"
[pipelines.p%d.source]
type = "iterable"
records = [{id = %d, name = "${NAME:-x}"}]
[pipelines.p%d.schedule]
mode = "cron"
expr = "*/5 * * * *"
[pipelines.p%d.tracing]
enabled = true
service_name = "svc"
[[pipelines.p%d.sinks]]
type = "stdout"
[pipelines.p%d.dlq]
type = "redis_stream"
url = "redis://:secret@127.0.0.1:6379/0"
stream = "dead"
`, i, i, i, i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkParse checks a 1,000-pipeline file; BenchmarkParseBaseline is
// go-toml's own decoding of the same bytes into a map, which Parse starts
// with, so the difference is the cost of the checks and positions.
func BenchmarkParse(b *testing.B) {
	data := manyPipelines(1000)
	reg := testRegistry(&testOutputs{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.toml", data, WithRegistry(reg), WithLookupEnv(noEnv)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBaseline(b *testing.B) {
	data := manyPipelines(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var doc map[string]any
		if err := tomlUnmarshal(data, &doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseScale checks files of 1,000, 10,000 and 20,000 pipelines:
// the time per pipeline stays flat (go-toml's duplicate-table check alone
// was quadratic; decodeDocument works around it).
func BenchmarkParseScale(b *testing.B) {
	reg := testRegistry(&testOutputs{})
	for _, n := range []int{1000, 10000, 20000} {
		data := manyPipelines(n)
		b.Run(fmt.Sprintf("pipelines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse("bench.toml", data, WithRegistry(reg), WithLookupEnv(noEnv)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
