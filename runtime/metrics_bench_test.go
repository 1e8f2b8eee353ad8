package runtime_test

import (
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// BenchmarkRunOverheadMetrics is BenchmarkRunOverhead with the metrics
// every worker binary has told of each run: their histograms cost no
// allocation per run.
func BenchmarkRunOverheadMetrics(b *testing.B) { runtime.BenchRunOverhead(b, metrics.New()) }
