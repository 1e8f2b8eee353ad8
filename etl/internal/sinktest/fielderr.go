package sinktest

import (
	"errors"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/errsplit"
)

// WantFieldErrors fails t unless err is exactly one *etl.FieldError per
// key of keys, in order (nil when keys is empty).
func WantFieldErrors(t testing.TB, err error, keys ...string) {
	t.Helper()
	var got []string
	for _, e := range errsplit.Split(err) {
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
