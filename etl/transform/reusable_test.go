package transform

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestReusableGivesTheSharedValueToOneTakerAtATime(t *testing.T) {
	var r reusable[int]
	a := r.take()
	b := r.take()
	if a == b {
		t.Fatal("two takers got the same value")
	}
	r.give(b) // a fresh value: the shared one stays taken
	if c := r.take(); c == a {
		t.Fatal("the shared value was handed out while taken")
	}
	r.give(a)
	if c := r.take(); c != a {
		t.Fatal("the shared value was not reused once given back")
	}
}

// TestTransformsAppliedConcurrently: a Filter and a Map shared by
// goroutines give each record its own result (run with -race).
func TestTransformsAppliedConcurrently(t *testing.T) {
	f, err := Filter("record.n % 2 == 0")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Map(map[string]string{"twice": "record.n * 2", "s": "string(record.n)"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				n := g*1000 + i
				r := etl.Record{"n": json.Number(strconv.Itoa(n))}
				_, keep, err := apply(t, f, r)
				if err != nil || keep != (n%2 == 0) {
					t.Errorf("filter %d: keep %v, err %v", n, keep, err)
					return
				}
				r, _, err = apply(t, m, r)
				if err != nil || r["twice"] != int64(2*n) || r["s"] != strconv.Itoa(n) {
					t.Errorf("map %d: %v, %v", n, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
