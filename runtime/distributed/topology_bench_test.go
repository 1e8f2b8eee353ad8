package distributed

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
)

// topologyCycler starts a coordinator on url and returns its acquire+release
// cycle.
func topologyCycler(b *testing.B, url string) cycler {
	coord, err := NewRedisWorkerCoordinator(Options{
		RedisURL: url,
		LeaseTTL: time.Minute,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = coord.Close() })
	if err := coord.Start(context.Background(), "bench", []string{"bench"}); err != nil {
		b.Fatal(err)
	}
	return coordinatorCycler(coord)
}

// BenchmarkTopologyAcquireRelease measures the coordinator's acquire+release
// cycle, one after another, on one redis-server ("single"), on a 3-master
// Redis Cluster through go-redis's ClusterClient ("cluster"), and on a
// primary found through three Sentinels ("sentinel"), in the same run. The
// "ratio" case interleaves them in rounds, so that drift in the machine's
// speed hits all alike, and reports each one's throughput relative to
// single. One pipeline's cycle lives on one master, so this is the client's
// per-request cost, not the cluster's capacity.
func BenchmarkTopologyAcquireRelease(b *testing.B) {
	cyclers := map[string]cycler{
		"single":   topologyCycler(b, redistest.Start(b).URL()),
		"cluster":  topologyCycler(b, redistest.StartCluster(b, 3).URL()),
		"sentinel": topologyCycler(b, redistest.StartSentinels(b).URL()),
	}
	names := []string{"single", "cluster", "sentinel"}
	benchEach(b, cyclers, names...)
	b.Run("ratio", func(b *testing.B) {
		spent, rounds := interleave(b, cyclers, names, ratioRound)
		for _, n := range names[1:] {
			perRound := make([]float64, len(rounds))
			for i, took := range rounds {
				perRound[i] = took["single"].Seconds() / took[n].Seconds()
			}
			b.ReportMetric(spent["single"].Seconds()/spent[n].Seconds(), n+"/single")
			b.ReportMetric(median(perRound), n+"/single-median")
		}
	})
}
