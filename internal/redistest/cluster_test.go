package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestClusterServesEverySlotAndSurvivesAKilledMaster(t *testing.T) {
	c := StartCluster(t, 3)
	if !strings.HasPrefix(c.URL(), "redis+cluster://"+c.Masters[0].Addr()+"?addr=") ||
		strings.Count(c.URL(), "addr=") != 2 {
		t.Fatalf("URL = %q, want the first master in the authority and two addr parameters", c.URL())
	}
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Masters[0].Addr()}})
	defer cc.Close()
	// Keys spread over every master.
	owners := map[int]string{}
	for i := 0; len(owners) < 3 && i < 100; i++ {
		k := fmt.Sprintf("k%d", i)
		if err := cc.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		owners[c.MasterOf(k)] = k
	}
	if len(owners) != 3 {
		t.Fatalf("keys landed on %d masters, want 3", len(owners))
	}
	c.Masters[0].Kill()
	c.WaitNodeFailed(0, 10*time.Second)
	for m, k := range owners {
		err := cc.Get(ctx, k).Err()
		if m == 0 && err == nil {
			t.Fatalf("GET %s answered with its master killed", k)
		}
		if m != 0 && err != nil {
			t.Fatalf("GET %s on a live master: %v (the others must go on)", k, err)
		}
	}
}

func TestClusterNeedsThreeMasters(t *testing.T) {
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartCluster(ft, 2)
	}()
	<-done
	if !ft.failed {
		t.Fatal("StartCluster(2) did not fail")
	}
}

func TestCLIBinaryMissingSkipsOutsideCIAndFailsUnderCI(t *testing.T) {
	t.Setenv(CLIBinaryEnv, "redis-cli-that-does-not-exist")
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		ft := &fakeTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			CLIBinary(ft)
		}()
		<-done
		if want := ci == "true"; ft.failed != want || ft.skipped == want {
			t.Errorf("CI=%q: skipped=%v failed=%v", ci, ft.skipped, ft.failed)
		}
	}
}
