package leasebackend

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

func TestEveryScriptHasItsSourceAndItsSHA1(t *testing.T) {
	all := append(slices.Clone(PrimaryScripts), EpochBumpScript)
	all = append(all, QuorumScripts...)
	all = append(all, HistoryMatchScript, SlotCompletedScript)
	if len(all) != 13 {
		t.Fatalf("%d scripts, want the 13 of lua/", len(all))
	}
	for _, s := range all {
		src := Source(s)
		if src == "" {
			t.Fatalf("script %s has no source", s.Hash())
		}
		sum := sha1.Sum([]byte(src))
		if s.Hash() != hex.EncodeToString(sum[:]) {
			t.Errorf("hash %s is not the SHA1 of its source", s.Hash())
		}
	}
	if Source(redis.NewScript("return 1")) != "" {
		t.Error("Source knows a script of another package")
	}
}

// TestRunPipelinedFallsBackToEvalAfterNoScript: loaded scripts run with
// EVALSHA; after the server forgot them (SCRIPT FLUSH, a restart) the
// same calls still succeed, resent with EVAL.
func TestRunPipelinedFallsBackToEvalAfterNoScript(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := LoadScripts(ctx, c, PrimaryScripts); err != nil {
		t.Fatal(err)
	}
	for _, s := range PrimaryScripts {
		if ok, err := c.ScriptExists(ctx, s.Hash()).Result(); err != nil || !ok[0] {
			t.Fatalf("script %s not loaded: %v %v", s.Hash(), ok, err)
		}
	}
	calls := []Call{
		{Script: EpochInitScript, Keys: []string{"t:epoch:{a}"}},
		{Script: EpochInitScript, Keys: []string{"t:epoch:{b}"}},
	}
	for round, flush := range []bool{false, true} {
		if flush {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for i, cmd := range RunPipelined(ctx, c, calls) {
			if err := cmd.Err(); err != nil {
				t.Fatalf("round %d call %d: %v", round, i, err)
			}
		}
	}
	if !IsNoScript(c.EvalSha(ctx, "0000000000000000000000000000000000000000", nil).Err()) {
		t.Error("IsNoScript misses NOSCRIPT")
	}
}
