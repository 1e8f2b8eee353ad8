package runtime

import (
	"context"
	"testing"
	"time"
	"unsafe"
)

// TestLocalEntrySize: a pipeline's entry, its ring included, fits the
// allocator's 112-byte class (it was 64 bytes and a 128-byte ring).
func TestLocalEntrySize(t *testing.T) {
	if size := unsafe.Sizeof(runRing{}); size > 64 {
		t.Errorf("runRing is %d bytes, want at most 64", size)
	}
	if size := unsafe.Sizeof(localEntry{}); size > 112 {
		t.Errorf("localEntry is %d bytes, want at most 112", size)
	}
}

// TestRunHistoryOffReleasesTheRings: Off forgets the runs kept and gives
// their buffers back; runs recorded afterwards are not kept.
func TestRunHistoryOffReleasesTheRings(t *testing.T) {
	c := NewLocalCoordinator(nil)
	e := c.entry("p1")
	for k := range 10 {
		c.recordRun(e, historyRun(1, k, false))
	}
	if e.history.n != 10 || e.history.buf == nil {
		t.Fatalf("10 runs recorded: ring %+v", e.history)
	}
	c.SetRunHistory(RunHistoryPolicy{Off: true})
	c.recordRun(e, historyRun(1, 10, false))
	if e.history.n != 0 || e.history.buf != nil {
		t.Fatalf("history off: ring %+v", e.history)
	}
	c.SetRunHistory(RunHistoryPolicy{Limit: 5, MaxAge: 100 * 365 * 24 * time.Hour})
	c.recordRun(e, historyRun(1, 11, false))
	runs, err := c.RunHistory(context.Background(), "p1", 0)
	if err != nil || len(runs) != 1 || runs[0].RunNumber != historyRun(1, 11, false).RunNumber || runs[0].PipelineID != "p1" {
		t.Fatalf("history on again: %+v, %v", runs, err)
	}
}
