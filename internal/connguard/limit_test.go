package connguard

import "testing"

func TestCapIsASixteenthOfTheDescriptorLimitWithinBounds(t *testing.T) {
	for nofile, want := range map[uint64]int{0: 4, 32: 4, 64: 4, 256: 16, 1024: 64, 4096: 128, 1 << 20: 128} {
		if got := Cap(nofile); got != want {
			t.Errorf("Cap(%d) = %d, want %d", nofile, got, want)
		}
	}
	if n := DescriptorLimit(); n < 16 {
		t.Errorf("DescriptorLimit() = %d; the test process has more", n)
	}
}
