package sqlrec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestParseQueryReplacesOnlyRealParameters(t *testing.T) {
	in := `SELECT :slot_time::timestamptz, ':run_number', ":run_number", $tag$ :run_number $tag$, $1 -- :run_number
/* :fencing_token */ FROM t WHERE a > :last_slot_time AND b <= :slot_time AND c = :fencing_token`
	q, err := ParseQuery(in, DollarPlaceholder)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT $1::timestamptz, ':run_number', ":run_number", $tag$ :run_number $tag$, $1 -- :run_number
/* :fencing_token */ FROM t WHERE a > $2 AND b <= $1 AND c = $3`
	if q.SQL != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", q.SQL, want)
	}
	if !slices.Equal(q.Params, []string{"slot_time", "last_slot_time", "fencing_token"}) || !q.Uses("slot_time") || q.Uses("run_number") {
		t.Fatalf("params %v", q.Params)
	}
	q, _ = ParseQuery("SELECT :run_number, :run_number", QuestionPlaceholder)
	if q.SQL != "SELECT ?1, ?1" {
		t.Fatalf("sqlite form: %s", q.SQL)
	}
}

func TestParseQueryNamesAnUnknownParameter(t *testing.T) {
	_, err := ParseQuery("SELECT 1 WHERE x = :slot", DollarPlaceholder)
	if err == nil || !strings.Contains(err.Error(), ":slot at offset 19") || !strings.Contains(err.Error(), ":slot_time") {
		t.Fatalf("err = %v", err)
	}
}

func TestSlotTime(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if got := SlotTime(runtime.Lease{RunNumber: 1767225600}, now); !got.Equal(time.Unix(1767225600, 0)) {
		t.Errorf("cron slot: %v", got)
	}
	acq := now.Add(-time.Minute)
	if got := SlotTime(runtime.Lease{RunNumber: 1795948054963585, AcquiredAt: acq}, now); !got.Equal(acq) {
		t.Errorf("coordinator-numbered run: %v, want the lease's grant time", got)
	}
	if got := SlotTime(runtime.Lease{RunNumber: runtime.RunNumberOnce}, now); !got.Equal(now) {
		t.Errorf("outside a pool: %v", got)
	}
}

func TestParseQueryReadsRunParams(t *testing.T) {
	q, err := ParseQuery("SELECT * FROM t WHERE d = :param_day AND n > :param_n AND d2 = :param_day AND s = :slot_time", DollarPlaceholder)
	if err != nil {
		t.Fatal(err)
	}
	if q.SQL != "SELECT * FROM t WHERE d = $1 AND n > $2 AND d2 = $1 AND s = $3" || !slices.Equal(q.RunParams(), []string{"day", "n"}) {
		t.Fatalf("%s %v", q.SQL, q.RunParams())
	}
	if _, err := ParseQuery("SELECT :param_", DollarPlaceholder); err == nil || !strings.Contains(err.Error(), ":param_<name> for a run parameter") {
		t.Fatalf(":param_ alone: %v", err)
	}
}

func TestRunParamValue(t *testing.T) {
	ctx := runtime.ContextWithParams(context.Background(), map[string]string{"day": "2026-01-01"})
	if v, err := RunParamValue(ctx, "param_day"); err != nil || v != "2026-01-01" {
		t.Fatalf("%q, %v", v, err)
	}
	_, err := RunParamValue(context.Background(), "param_day")
	if !errors.Is(err, ErrMissingRunParam) || !strings.Contains(err.Error(), "(the run's parameters: none)") || !strings.Contains(err.Error(), "--param day=VALUE") {
		t.Fatalf("none: %v", err)
	}
}
