package leasebackend

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

// TestFailScriptDoublesTheBackoffUpToItsCapAndStopsAtTheLimit: fail.lua
// counts, doubles the backoff from the first up to the longest, marks the
// stop at the limit, and fail_reset.lua clears only a stopped state.
func TestFailScriptDoublesTheBackoffUpToItsCapAndStopsAtTheLimit(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	keys := []string{"t:lease:{p}", "t:completed:{p}", "t:failure:{p}"}
	fail := func(limit int) []int64 {
		t.Helper()
		if err := c.RPush(ctx, keys[0], "7 100 w#1").Err(); err != nil {
			t.Fatal(err)
		}
		v, err := FailScript.Run(ctx, c, keys, "7 100 w#1", 1000, 3000, limit, "boom", "w#1", 0).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i, want := range []int64{1000, 2000, 3000, 3000} {
		v := fail(5)
		if v[0] != 1 || v[1] != int64(i+1) || v[2] != want {
			t.Fatalf("failure %d: %v, want released, count %d, backoff %d ms", i+1, v, i+1, want)
		}
	}
	if n, _ := c.Exists(ctx, keys[0]).Result(); n != 0 {
		t.Error("the lease is still there")
	}
	reset := func() int64 {
		n, err := FailResetScript.Run(ctx, c, keys[1:]).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if reset() != 0 {
		t.Fatal("fail_reset cleared a count below the maximum")
	}
	if v := fail(5); v[1] != 5 || v[2] != -1 {
		t.Fatalf("the fifth failure: %v, want count 5, stopped", v)
	}
	if e, _ := c.HGet(ctx, keys[2], "error").Result(); e != "boom" {
		t.Errorf("error recorded: %q", e)
	}
	if reset() != 1 {
		t.Fatal("fail_reset left a stopped state")
	}
	if n, _ := c.ZCard(ctx, keys[1]).Result(); n != 0 {
		t.Errorf("%d members left after the reset", n)
	}
	// Another owner's lease: nothing recorded, nothing released.
	if err := c.RPush(ctx, keys[0], "8 101 v#2").Err(); err != nil {
		t.Fatal(err)
	}
	v, err := FailScript.Run(ctx, c, keys, "7 100 w#1", 1000, 3000, 5, "late", "w#1", 0).Int64Slice()
	if err != nil || v[0] != 0 || v[1] != 0 {
		t.Fatalf("with another owner's lease: %v, %v; want nothing done", v, err)
	}
}
