package buckets

import (
	"strconv"
	"testing"
)

func TestExponentialFormatsShort(t *testing.T) {
	got := Exponential(0.0002, 3, 10)
	want := []string{"0.0002", "0.0006", "0.0018", "0.0054", "0.0162", "0.0486", "0.1458", "0.4374", "1.3122", "3.9366"}
	for i, v := range got {
		if s := strconv.FormatFloat(v, 'g', -1, 64); s != want[i] {
			t.Errorf("bound %d = %s, want %s", i, s, want[i])
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("bounds not increasing: %v", got)
		}
	}
}

func TestExponentialRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		start, factor float64
		n             int
	}{{0, 2, 3}, {1, 1, 3}, {1, 2, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Exponential(%v, %v, %d) did not panic", c.start, c.factor, c.n)
				}
			}()
			Exponential(c.start, c.factor, c.n)
		}()
	}
}
