// Package buckets makes Prometheus histogram bucket bounds that print as
// short decimals. prometheus.ExponentialBuckets multiplies in float64, so
// 0.0002×3 becomes 0.0006000000000000001 and every scrape shows
// le="0.0006000000000000001"; rounding each bound to a few significant
// digits keeps the growth and gives le="0.0006".
package buckets

import "strconv"

// digits is how many significant digits a bound keeps: enough for any
// factor a histogram here uses, few enough to drop the float64 noise.
const digits = 6

// Exponential returns n upper bounds, start then each factor times the
// previous, each rounded to six significant digits. It panics, as
// prometheus.ExponentialBuckets does, on n < 1, start <= 0 or factor <= 1:
// bounds are package-level constants, so that is a programming error.
func Exponential(start, factor float64, n int) []float64 {
	if n < 1 || start <= 0 || factor <= 1 {
		panic("buckets: Exponential needs n >= 1, start > 0 and factor > 1")
	}
	out := make([]float64, n)
	v := start
	for i := range out {
		out[i] = Short(v)
		v *= factor
	}
	return out
}

// Short rounds v to six significant digits, so it formats as a short
// decimal with strconv.FormatFloat(v, 'g', -1, 64).
func Short(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	if err != nil {
		return v
	}
	return r
}
