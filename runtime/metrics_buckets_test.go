package runtime

import "testing"

// TestBucketsFitTheHistogram: a histogram holds maxBuckets bounds, so the
// bounds the pool observes with must not outgrow it.
func TestBucketsFitTheHistogram(t *testing.T) {
	if len(runDurationBuckets) > maxBuckets || len(latenessBuckets) > maxBuckets {
		t.Fatalf("%d run duration and %d lateness buckets, more than maxBuckets (%d)", len(runDurationBuckets), len(latenessBuckets), maxBuckets)
	}
}
