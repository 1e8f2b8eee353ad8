package leasebackend

import "testing"

func TestLeaseToken(t *testing.T) {
	for v, want := range map[string]int64{"7 7 w#1": 7, "9 1800000000 1800000000 host-1#ab": 9, "3 3 -1 a b#c": 3} {
		if got, err := LeaseToken(v); err != nil || got != want {
			t.Errorf("LeaseToken(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"garbage", "", " 7 7 w#1"} {
		if _, err := LeaseToken(v); err == nil {
			t.Errorf("LeaseToken(%q) did not fail", v)
		}
	}
}
