package engine

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/agora-etl/agora/runtime/history"
)

func TestCounted(t *testing.T) {
	r := newRunner(&Spec{PipelineID: "p"}, testEnv(systemClock{}, slog.New(slog.DiscardHandler)))
	boom := errors.New("boom")
	r.counted(nil, nil, history.RecordCounts{In: 2})
	r.counted(boom, nil, history.RecordCounts{})
	r.counted(errors.Join(boom, ErrStaleWrite), nil, history.RecordCounts{})
	r.counted(boom, ErrLeaseLost, history.RecordCounts{})
	r.counted(r.env.errs.panicked("Run", 1, nil), nil, history.RecordCounts{})
	r.counted(ErrSlotCompleted, nil, history.RecordCounts{Out: 1})
	rs := r.rareCopy()
	if r.st.ok != 1 || rs.errored != 2 || rs.staleRefused != 1 || rs.cancelled != 1 || rs.panicked != 1 ||
		rs.records != (history.RecordCounts{In: 2, Out: 1}) {
		t.Fatalf("counts: ok %d, %+v", r.st.ok, rs)
	}
}
