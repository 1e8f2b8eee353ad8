package runtime_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

func TestParamsFromContext(t *testing.T) {
	if p := runtime.ParamsFromContext(context.Background()); p != nil {
		t.Fatalf("outside a run: %v, want nil", p)
	}
	want := map[string]string{"day": "2026-01-01"}
	ctx := runtime.ContextWithParams(context.Background(), want)
	if got := runtime.ParamsFromContext(ctx); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestValidParamName(t *testing.T) {
	for name, ok := range map[string]bool{"day": true, "_x": true, "A1_b": true, "": false, "1a": false, "a-b": false, "a b": false, "é": false} {
		if got := runtime.ValidParamName(name); got != ok {
			t.Errorf("ValidParamName(%q) = %v, want %v", name, got, ok)
		}
	}
}

func TestValidateParams(t *testing.T) {
	if err := runtime.ValidateParams(map[string]string{"day": "2026-01-01", "n": ""}); err != nil {
		t.Fatal(err)
	}
	err := runtime.ValidateParams(map[string]string{"ok": "1", "bad-name": "2"})
	if !errors.Is(err, runtime.ErrBadParam) || !strings.Contains(err.Error(), `"bad-name"`) {
		t.Fatalf("err = %v", err)
	}
	many := map[string]string{}
	for i := range runtime.MaxParams + 1 {
		many["p"+strings.Repeat("x", i)] = ""
	}
	if err := runtime.ValidateParams(many); !errors.Is(err, runtime.ErrBadParam) {
		t.Fatalf("too many: %v", err)
	}
	if err := runtime.ValidateParams(map[string]string{"big": strings.Repeat("v", runtime.MaxParamBytes)}); !errors.Is(err, runtime.ErrBadParam) {
		t.Fatalf("too big: %v", err)
	}
}

func TestFormatParams(t *testing.T) {
	if got := runtime.FormatParams(map[string]string{"b": "2", "a": "x y"}); got != "a=x y b=2" {
		t.Fatalf("got %q", got)
	}
	if got := runtime.FormatParams(nil); got != "" {
		t.Fatalf("none: %q", got)
	}
}

func TestParseParams(t *testing.T) {
	got, err := runtime.ParseParams([]string{"day=2026-01-01", "q=a=b", "empty="})
	if err != nil || !maps.Equal(got, map[string]string{"day": "2026-01-01", "q": "a=b", "empty": ""}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := runtime.ParseParams(nil); got != nil || err != nil {
		t.Fatalf("none: %v, %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"day"}, `"day" is not key=value`},
		{[]string{"=x"}, `"=x" has an empty key`},
		{[]string{"9x=1"}, `"9x=1": key "9x" is not an identifier`},
		{[]string{"a=1", "a=2"}, `"a=2": key "a" is given twice (first as "a=1")`},
	} {
		_, err := runtime.ParseParams(tc.args)
		if !errors.Is(err, runtime.ErrBadParam) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseParams(%q) = %v, want %q", tc.args, err, tc.want)
		}
	}
}
