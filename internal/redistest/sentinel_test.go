package redistest

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestSentinelGroupFailsOver(t *testing.T) {
	g := StartSentinels(t, WithPassword("p@ss"))
	if g.Master() != g.Data[0] {
		t.Fatal("the first data server is not the primary at start")
	}
	u := g.URL()
	if !strings.HasPrefix(u, "redis+sentinel://"+g.Sentinels[0].Addr()+"?") ||
		strings.Count(u, "addr=") != 2 || !strings.Contains(u, "master_name="+MasterName) ||
		!strings.Contains(u, "password=p%40ss") {
		t.Fatalf("URL = %q", u)
	}
	start := time.Now()
	next := g.Failover(15 * time.Second)
	if next != g.Data[1] {
		t.Fatal("the replica was not promoted")
	}
	t.Logf("forced failover took %s", time.Since(start))
	dc := g.dataClient(next)
	defer dc.Close()
	if err := dc.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET on the new primary: %v", err)
	}

	start = time.Now()
	next.Kill()
	if back := g.WaitNewMaster(next, 15*time.Second); back != g.Data[0] {
		t.Fatal("the old primary was not promoted back")
	}
	t.Logf("failover after SIGKILL took %s", time.Since(start))
}
