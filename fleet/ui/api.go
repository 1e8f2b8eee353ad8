package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/agora-etl/agora/runtime/distributed"
)

// api serves GET /api/{what}: the Inspector's results as JSON.
//
//   - /api/workers: the live workers, as "fleet workers --json".
//   - /api/leases?pipeline=ID: leases, as "fleet leases --json".
//   - /api/pipelines?offset=N&limit=N&q=&worker=&outcome=&paused=1: a
//     distributed.PipelinePage of the summaries.
//   - /api/runs?pipeline=ID&outcome=&failed=1&worker=&q=&from=&to=&limit=N&cursor=C:
//     a distributed.RunPage; follow its "next" as cursor.
//
// limit is 1 to MaxAPILimit (default DefaultAPILimit): a large answer
// comes in pages, never all at once.
func (h *Handler) api(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	var v any
	var err error
	switch what := r.PathValue("what"); what {
	case "workers":
		v, err = h.in.Workers(ctx)
	case "leases":
		v, err = h.in.Leases(ctx, q["pipeline"]...)
	case "pipelines":
		var f distributed.PipelineFilter
		var offset, limit int
		if f, err = pipelineFilter(q); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		if limit, err = intParam(q, "limit", DefaultAPILimit, 1, MaxAPILimit); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		if offset, err = intParam(q, "offset", 0, 0, 1<<30); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		var o distributed.Overview
		if o, _, err = h.sums.get(ctx); err == nil {
			v, err = o.Page(f, offset, limit)
		}
	case "runs":
		var f distributed.RunFilter
		var limit int
		if f, err = runFilter(q); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		if limit, err = intParam(q, "limit", DefaultAPILimit, 1, MaxAPILimit); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		v, err = h.runPage(ctx, distributed.RunPageQuery{RunFilter: f, Limit: limit, Cursor: q.Get("cursor")})
	case "audit":
		var limit int
		if limit, err = intParam(q, "limit", DefaultAPILimit, 1, MaxAPILimit); err != nil {
			apiError(w, http.StatusBadRequest, err)
			return
		}
		v, err = h.in.Audit(ctx, distributed.AuditQuery{PipelineIDs: nonEmpty(q["pipeline"]), Limit: limit})
	default:
		apiError(w, http.StatusNotFound, fmt.Errorf("unknown resource %q (workers, leases, pipelines, runs, audit)", what))
		return
	}
	if err != nil {
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, distributed.ErrUnknownPipeline):
			status = http.StatusNotFound
		case errors.Is(err, distributed.ErrBadQuery):
			status = http.StatusBadRequest
		default:
			h.opts.Logger.Error("fleet ui: api request failed", "path", r.URL.Path, "error", err)
		}
		apiError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// writeJSON answers v as indented JSON, as the fleet CLI prints it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// apiError answers {"error": "..."}.
func apiError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
