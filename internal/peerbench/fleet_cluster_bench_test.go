package peerbench

import (
	"fmt"
	"testing"

	"github.com/agora-etl/agora/internal/redistest"
)

// fleetCluster starts a Redis Cluster of masters for a fleet: replicas get
// its redis+cluster:// URL, and the snapshot sums CPU and commands over
// every master.
func fleetCluster(b *testing.B, masters int) fleetTarget {
	cl := redistest.StartCluster(b, masters)
	addrs := make([]string, len(cl.Masters))
	for i, m := range cl.Masters {
		addrs[i] = m.Addr()
	}
	return fleetTarget{url: cl.URL(), snapshot: fleetSnapshot(b, addrs...)}
}

// BenchmarkFleetCluster is BenchmarkFleet's agora contender on a 3-master
// Redis Cluster ("cluster-3") beside one redis-server ("single") in the same
// run: 3 replica processes, N pipelines each on "* * * * * *". Redis CPU and
// commands are summed over the masters. AGORA_FLEET_CLUSTER_SIZES sets the
// pipeline counts (default "5000,10000"); AGORA_FLEET_SECONDS the window.
// gocron and the floor are left out: both build a single-node client.
func BenchmarkFleetCluster(b *testing.B) {
	window := fleetWindow(b)
	sizes := fleetSizes(b, "AGORA_FLEET_CLUSTER_SIZES", []int{5000, 10000})
	targets := map[string]func(*testing.B) fleetTarget{
		"single":    fleetSingle,
		"cluster-3": func(b *testing.B) fleetTarget { return fleetCluster(b, 3) },
	}
	for _, n := range sizes {
		for _, topo := range []string{"single", "cluster-3"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, topo), func(b *testing.B) {
				for range b.N {
					r := runFleetOn(b, targets[topo](b), "agora", n, window)
					b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
					b.ReportMetric(100*r.cpuSeconds/r.window.Seconds(), "redis-cpu-%")
					if r.distinct > 0 {
						b.ReportMetric(float64(r.commands)/float64(r.distinct), "cmds/run")
					}
					b.ReportMetric(float64(r.missed), "missed")
					b.ReportMetric(float64(r.duplicates), "duplicates")
					b.ReportMetric(float64(r.distinct), "slots-run")
				}
			})
		}
	}
}
