package sqlrec

import (
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
