package leasebackend

import (
	"slices"
	"sync"
	"testing"
)

// testKeys builds keys the way the backends do: the pipeline id in a hash
// tag after a prefix.
func testKeys(prefix string) func(id string) []string {
	return func(id string) []string {
		return []string{prefix + "lease:{" + id + "}", prefix + "token:{" + id + "}"}
	}
}

func TestKeyCacheBuildsOncePerPipeline(t *testing.T) {
	var mu sync.Mutex
	built := map[string]int{}
	build := testKeys("p:")
	c := NewKeyCache(func(id string) []string {
		mu.Lock()
		built[id]++
		mu.Unlock()
		return build(id)
	})
	for range 3 {
		if got, want := c.Get("a"), build("a"); !slices.Equal(got, want) {
			t.Fatalf("Get(a) = %q; want %q", got, want)
		}
	}
	if got := c.Get("b")[0]; got != "p:lease:{b}" {
		t.Fatalf("Get(b)[0] = %q; want p:lease:{b}", got)
	}
	if built["a"] != 1 || built["b"] != 1 {
		t.Fatalf("built %v; want each pipeline's keys built once", built)
	}
}

func TestKeyCacheConcurrentGetsAgree(t *testing.T) {
	c := NewKeyCache(testKeys("q:"))
	var wg sync.WaitGroup
	got := make([][]string, 16)
	for i := range got {
		wg.Go(func() { got[i] = c.Get("p") })
	}
	wg.Wait()
	for _, ks := range got {
		if &ks[0] != &got[0][0] {
			t.Fatal("concurrent gets returned different slices; want the one cached")
		}
	}
}
