package runtime

import (
	"context"
	"log/slog"
)

// runAttrsHandler adds the run's pipeline_id, run_number and (when fenced)
// fencing_token
// to every record logged with a run's context (slog.InfoContext(ctx, …) in
// a pipeline), so a user's own lines carry what the worker's lines about the
// run carry. A record that already names its pipeline_id, directly or
// through Logger.With, is left as it is: the worker's own lines say it once.
// Likewise run_number and fencing_token are each added only when the record
// does not name them already: a pipeline that logs its token itself
// (slog.InfoContext(ctx, "…", "fencing_token", lease.FencingToken)) shows it
// once.
type runAttrsHandler struct {
	next slog.Handler
	// named is true once With added a pipeline_id, or a group was opened:
	// attributes added then would land inside the group.
	named bool
	// has holds the run attributes With added.
	has runAttrKeys
}

// runAttrKeys says which of the run attributes a record names.
type runAttrKeys struct{ runNumber, token bool }

func (k *runAttrKeys) see(key string) {
	k.runNumber = k.runNumber || key == "run_number"
	k.token = k.token || key == "fencing_token"
}

// RunAttrsHandler wraps next so that a record logged with a run's context
// (slog.InfoContext(ctx, …) inside Run) gets the run's pipeline_id,
// run_number and fencing_token, unless it names a pipeline_id itself: what
// a program's logger wants for its pipelines' own lines to read like the
// worker's (worker.NewLogger wraps its handlers so).
func RunAttrsHandler(next slog.Handler) slog.Handler { return &runAttrsHandler{next: next} }

// Enabled implements slog.Handler.
func (h *runAttrsHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *runAttrsHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.named || ctx == nil {
		return h.next.Handle(ctx, r)
	}
	lease, ok := LeaseFromContext(ctx)
	if !ok || lease.PipelineID == "" {
		return h.next.Handle(ctx, r)
	}
	named := false
	has := h.has
	r.Attrs(func(a slog.Attr) bool {
		named = a.Key == "pipeline_id"
		has.see(a.Key)
		return !named
	})
	if !named {
		r = r.Clone()
		r.AddAttrs(slog.String("pipeline_id", lease.PipelineID))
		if lease.RunNumber != RunNumberAuto && !has.runNumber {
			r.AddAttrs(slog.Int64("run_number", lease.RunNumber))
		}
		if lease.FencingToken != 0 && !has.token {
			// As on the worker's own lines: an unfenced lease has no token to show.
			r.AddAttrs(slog.Int64("fencing_token", lease.FencingToken))
		}
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *runAttrsHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	named, has := h.named, h.has
	for _, a := range attrs {
		named = named || a.Key == "pipeline_id"
		has.see(a.Key)
	}
	return &runAttrsHandler{next: h.next.WithAttrs(attrs), named: named, has: has}
}

// WithGroup implements slog.Handler.
func (h *runAttrsHandler) WithGroup(name string) slog.Handler {
	return &runAttrsHandler{next: h.next.WithGroup(name), named: true, has: h.has}
}
