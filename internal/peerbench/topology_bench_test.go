package peerbench

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// topologyCycler starts a coordinator on url, under its own key prefix, and
// returns its acquire+release cycle.
func topologyCycler(b *testing.B, url, prefix string) cycler {
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{
		RedisURL:  url,
		KeyPrefix: prefix,
		LeaseTTL:  time.Minute,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
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
// primary found through three Sentinels ("sentinel"), in the same run, and
// on that same primary by its plain redis:// URL ("replicated": the cost of
// the replica it feeds, without the failover client). The "ratio" case
// interleaves them in rounds, so that drift in the machine's speed hits all
// alike, and reports each one's throughput relative to single. One
// pipeline's cycle lives on one master, so this is the client's per-request
// cost, not the cluster's capacity.
func BenchmarkTopologyAcquireRelease(b *testing.B) {
	group := redistest.StartSentinels(b)
	cyclers := map[string]cycler{
		"single":     topologyCycler(b, redistest.Start(b).URL(), ""),
		"cluster":    topologyCycler(b, redistest.StartCluster(b, 3).URL(), ""),
		"sentinel":   topologyCycler(b, group.URL(), "sentinel:"),
		"replicated": topologyCycler(b, group.Data[0].URL(), "replicated:"),
	}
	names := []string{"single", "cluster", "sentinel", "replicated"}
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
