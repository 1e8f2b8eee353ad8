package engine

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/notify"
)

type events []notify.Event

func (e *events) Notify(ev notify.Event) { *e = append(*e, ev) }

func TestNotify(t *testing.T) {
	var got events
	env := testEnv(&steppingClock{t: time.Unix(100, 0)}, slog.New(slog.DiscardHandler))
	env.notifier, env.workerID = &got, "w"
	r := newRunner(&Spec{PipelineID: "p"}, env)
	r.notifyRunFailed(Lease{RunNumber: 5, FencingToken: 2}, errors.Join(ErrStaleWrite, errors.New("postgres://u:secret@h")))
	r.notifyStopped(errors.New("boom"), 3)
	if len(got) != 3 || got[0].Kind != notify.StaleWriteRefused || got[1].Kind != notify.RunFailed || got[2].Kind != notify.PipelineStopped {
		t.Fatalf("events %+v", got)
	}
	if got[1].ConsecutiveErrors != 1 || got[1].RunNumber != 5 || got[1].FencingToken != 2 || got[2].ConsecutiveErrors != 3 || got[1].WorkerID != "w" {
		t.Fatalf("events %+v", got)
	}
	for _, ev := range got {
		if ev.Error == "" || strings.Contains(ev.Error, "secret") {
			t.Fatalf("event error %q", ev.Error)
		}
	}
}
