package isnil

import (
	"io"
	"testing"
)

type impl struct{}

func (*impl) Write(p []byte) (int, error) { return len(p), nil }

type funcType func()

func TestValue(t *testing.T) {
	var nilPtr *impl
	var nilWriter io.Writer = nilPtr
	var nilMap map[string]int
	var nilFunc funcType
	var nilChan chan int
	var nilSlice []int
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, true},
		{"typed nil pointer", nilPtr, true},
		{"typed nil behind an interface", nilWriter, true},
		{"nil map", nilMap, true},
		{"nil func", nilFunc, true},
		{"nil chan", nilChan, true},
		{"nil slice", nilSlice, true},
		{"pointer", &impl{}, false},
		{"struct", impl{}, false},
		{"zero int", 0, false},
		{"empty string", "", false},
		{"empty slice", []int{}, false},
	} {
		if got := Value(tc.v); got != tc.want {
			t.Errorf("Value(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
