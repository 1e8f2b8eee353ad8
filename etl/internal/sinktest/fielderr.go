package sinktest

import (
	"errors"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// WantFieldErrors fails t unless err is exactly one *etl.FieldError per
// key of keys, in order (nil when keys is empty).
func WantFieldErrors(t testing.TB, err error, keys ...string) {
	t.Helper()
	var got []string
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	for _, e := range errs {
		var fe *etl.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *etl.FieldError", e)
		}
		got = append(got, fe.Key)
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("problems with keys %v (%v), want %v", got, err, keys)
	}
}
