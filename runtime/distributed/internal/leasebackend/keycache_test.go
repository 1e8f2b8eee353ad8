package distributed

import (
	"slices"
	"sync"
	"testing"
)

func TestKeyCacheBuildsOncePerPipeline(t *testing.T) {
	var mu sync.Mutex
	built := map[string]int{}
	c := newKeyCache(func(id string) []string {
		mu.Lock()
		built[id]++
		mu.Unlock()
		return keys{prefix: "p:"}.pipelineKeys(id)
	})
	for range 3 {
		if got, want := c.get("a"), (keys{prefix: "p:"}).pipelineKeys("a"); !slices.Equal(got, want) {
			t.Fatalf("get(a) = %q; want %q", got, want)
		}
	}
	if got := c.get("b")[0]; got != "p:lease:{b}" {
		t.Fatalf("get(b)[0] = %q; want p:lease:{b}", got)
	}
	if built["a"] != 1 || built["b"] != 1 {
		t.Fatalf("built %v; want each pipeline's keys built once", built)
	}
}

func TestKeyCacheConcurrentGetsAgree(t *testing.T) {
	c := newKeyCache(quorumKeys{prefix: "q:"}.nodeKeys)
	var wg sync.WaitGroup
	got := make([][]string, 16)
	for i := range got {
		wg.Go(func() { got[i] = c.get("p") })
	}
	wg.Wait()
	for _, ks := range got {
		if &ks[0] != &got[0][0] {
			t.Fatal("concurrent gets returned different slices; want the one cached")
		}
	}
}
