package errsplit

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	wrapped := fmt.Errorf("context: %w", errors.Join(b, c))
	tests := []struct {
		name string
		err  error
		want []error
	}{
		{"nil", nil, nil},
		{"one", a, []error{a}},
		{"joined", errors.Join(a, b), []error{a, b}},
		{"nested joins", errors.Join(a, errors.Join(b, c)), []error{a, b, c}},
		{"a wrapped join stays one problem", wrapped, []error{wrapped}},
		{"fmt with two %w", fmt.Errorf("%w and %w", a, b), []error{a, b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Split(tt.err); !slices.Equal(got, tt.want) {
				t.Fatalf("Split(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
