package config

import (
	"errors"
	"testing"
)

func TestDiagnosticsSortedAndFormatted(t *testing.T) {
	ds := Diagnostics{
		{File: "b.toml", Line: 1, Col: 1, Message: "z"},
		{File: "a.toml", Line: 3, Col: 2, Message: "y"},
		{File: "a.toml", Line: 3, Col: 1, Message: "x"},
		{File: "a.toml", Line: 3, Col: 1, Message: "x"},
		{File: "a.toml", Line: 0, Message: "cannot read"},
	}.sorted()
	want := "a.toml: cannot read\na.toml:3:1: x\na.toml:3:2: y\nb.toml:1:1: z"
	if got := ds.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	var err error = ds
	var target Diagnostics
	if !errors.As(err, &target) || len(target) != 4 {
		t.Errorf("errors.As(Diagnostics) = %v, %d entries", target, len(target))
	}
}
