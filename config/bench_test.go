package config

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2/unstable"
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

// BenchmarkParseScale checks files of 1,000, 10,000 and 20,000 pipelines
// (target: 10,000 in at most 1 s) beside, in the same run, what any
// checker of the file must at least do:
//
//   - tokenize: go-toml's unstable parser walking every expression, the
//     raw tokenization;
//   - decode: decodeDocument alone, go-toml's decoding of the same bytes
//     into a map, split per pipeline so it stays linear;
//   - go-toml: a bare toml.Unmarshal into a map (1,000 only:
//     go-toml's duplicate-table check makes it quadratic, which is what
//     decodeDocument works around).
//
// Besides the wall clock each case reports cpu-s/op, the process's user +
// system time per operation (the garbage collector's included), which a
// shared machine disturbs less.
func BenchmarkParseScale(b *testing.B) {
	reg := testRegistry(&testOutputs{})
	for _, n := range []int{1000, 10000, 20000} {
		data := manyPipelines(n)
		cases := []struct {
			name string
			run  func() error
		}{
			{"parse", func() error {
				_, err := Parse("bench.toml", data, WithRegistry(reg), WithLookupEnv(noEnv))
				return err
			}},
			{"tokenize", func() error {
				var p unstable.Parser
				p.Reset(data)
				for p.NextExpression() {
				}
				return p.Error()
			}},
			{"decode", func() error {
				_, err := decodeDocument(data)
				return err
			}},
		}
		if n <= 1000 {
			cases = append(cases, struct {
				name string
				run  func() error
			}{"go-toml", func() error {
				var doc map[string]any
				return tomlUnmarshal(data, &doc)
			}})
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("pipelines=%d/%s", n, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				cpu0 := processCPU()
				for b.Loop() {
					if err := c.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// processCPU is the user + system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
