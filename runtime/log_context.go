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
type runAttrsHandler struct {
	next slog.Handler
	// named is true once With added a pipeline_id, or a group was opened:
	// attributes added then would land inside the group.
	named bool
}

// withRunAttrs wraps h.
func withRunAttrs(h slog.Handler) slog.Handler { return &runAttrsHandler{next: h} }

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
	r.Attrs(func(a slog.Attr) bool {
		named = a.Key == "pipeline_id"
		return !named
	})
	if !named {
		r = r.Clone()
		r.AddAttrs(slog.String("pipeline_id", lease.PipelineID))
		if lease.RunNumber != RunNumberAuto {
			r.AddAttrs(slog.Int64("run_number", lease.RunNumber))
		}
		if lease.FencingToken != 0 {
			// As on the worker's own lines: an unfenced lease has no token to show.
			r.AddAttrs(slog.Int64("fencing_token", lease.FencingToken))
		}
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *runAttrsHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	named := h.named
	for _, a := range attrs {
		named = named || a.Key == "pipeline_id"
	}
	return &runAttrsHandler{next: h.next.WithAttrs(attrs), named: named}
}

// WithGroup implements slog.Handler.
func (h *runAttrsHandler) WithGroup(name string) slog.Handler {
	return &runAttrsHandler{next: h.next.WithGroup(name), named: true}
}
