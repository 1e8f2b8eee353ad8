package etl

import (
	"errors"
	"testing"
	"time"
)

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || time.Duration(d) != 90*time.Second {
		t.Fatalf("UnmarshalText = %v, %v", time.Duration(d), err)
	}
	if err := d.UnmarshalText([]byte("soon")); err == nil {
		t.Fatal("bad duration accepted")
	}
	if b, _ := Duration(2 * time.Second).MarshalText(); string(b) != "2s" {
		t.Fatalf("MarshalText = %q", b)
	}
	var fe *FieldError
	if err := checkDuration("block", Duration(5)); !errors.As(err, &fe) || fe.Key != "block" {
		t.Fatalf("5ns: %v", err)
	}
	if err := checkDuration("block", Duration(-time.Second)); err == nil {
		t.Fatal("negative accepted")
	}
	if err := checkDuration("block", Duration(time.Second)); err != nil {
		t.Fatal(err)
	}
}
