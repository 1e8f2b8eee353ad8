package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
	"github.com/agora-etl/agora/runtime"
)

func TestSourceBindsRunParams(t *testing.T) {
	db, _ := testDB(t)
	cfg := SourceConfig{Query: "SELECT :param_day AS day, :param_day || '/' || :param_n AS both, :run_number AS run"}
	if got := cfg.RunParams(); !slices.Equal(got, []etl.ParamUse{{Key: "query", Name: "day"}, {Key: "query", Name: "n"}}) {
		t.Fatalf("RunParams = %v", got)
	}
	src, err := NewSource(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := runtime.ContextWithParams(sinktest.Slot("p", 1767225600, 7), map[string]string{"day": "2026-01-01", "n": "3"})
	_, recs, _ := sinktest.Drain(t, ctx, src, 10)
	if got := fmt.Sprint(recs); got != "[map[both:2026-01-01/3 day:2026-01-01 run:1767225600]]" {
		t.Fatalf("records %s", got)
	}

	src, _ = NewSource(db, cfg)
	_, err = src.Read(runtime.ContextWithParams(context.Background(), map[string]string{"day": "x"}), 10)
	if !errors.Is(err, sqlrec.ErrMissingRunParam) || !strings.Contains(err.Error(), ":param_n (the run's parameters: day)") {
		t.Fatalf("a run without :param_n's value: %v", err)
	}
}
