package etl_test

import (
	"context"
	"io"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// replacingSink is a sink that says whether it replaces slots.
type replacingSink struct{ replaces bool }

func (replacingSink) Write(context.Context, []etl.Record) error { return nil }
func (s replacingSink) ReplacesSlots() bool                     { return s.replaces }

// A pipeline replaces slots only when it has sinks and every one does;
// sinks without the method (files, stdout, ...) do not; Named passes it
// through; the dead-letter queue is not asked.
func TestPipelineReplacesSlotsOnlyWhenEverySinkDoes(t *testing.T) {
	yes, no := replacingSink{true}, replacingSink{false}
	stdout := etl.NewStdoutSink(io.Discard)
	cases := []struct {
		name  string
		sinks []etl.Sink
		opts  []etl.Option
		want  bool
	}{
		{"one that replaces", []etl.Sink{yes}, nil, true},
		{"all replace, one named", []etl.Sink{yes, etl.Named("n", yes)}, nil, true},
		{"one does not", []etl.Sink{yes, no}, nil, false},
		{"named that does not", []etl.Sink{yes, etl.Named("n", no)}, nil, false},
		{"a sink without the method", []etl.Sink{yes, stdout}, nil, false},
		{"no sinks", nil, nil, false},
		{"a dead-letter queue that does not", []etl.Sink{yes}, []etl.Option{etl.WithDLQ(stdout)}, true},
	}
	for _, c := range cases {
		p := etl.New(etl.NewIterableSource(nil), c.sinks, c.opts...)
		r, ok := p.(etl.SlotReplacer)
		if !ok {
			t.Fatalf("%T is not an etl.SlotReplacer", p)
		}
		if got := r.ReplacesSlots(); got != c.want {
			t.Errorf("%s: ReplacesSlots %v, want %v", c.name, got, c.want)
		}
	}
	if etl.ReplacesSlots(stdout) {
		t.Error("the stdout sink replaces slots")
	}
}
