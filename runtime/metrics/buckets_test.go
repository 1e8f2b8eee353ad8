package metrics

import (
	"testing"
	"unsafe"
)

// TestBucketsFitTheHistogram: a histogram holds maxBuckets bounds, so the
// bounds the pool observes with must not outgrow it.
func TestBucketsFitTheHistogram(t *testing.T) {
	if len(runDurationBuckets) > maxBuckets || len(latenessBuckets) > maxBuckets {
		t.Fatalf("%d run duration and %d lateness buckets, more than maxBuckets (%d)", len(runDurationBuckets), len(latenessBuckets), maxBuckets)
	}
}

// TestHistogramsSize keeps a pipeline's histograms, which a pool holds once
// per pipeline that ran, small.
func TestHistogramsSize(t *testing.T) {
	if size := unsafe.Sizeof(runHistograms{}); size > 128 {
		t.Errorf("runHistograms is %d bytes, want at most 128", size)
	}
}
