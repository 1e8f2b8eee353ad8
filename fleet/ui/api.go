package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agora-etl/agora/runtime/distributed"
)

// api serves GET /api/{what}: the Inspector's results as JSON, the very
// values "fleet {what} --json" prints, indented alike.
func (h *Handler) api(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var v any
	var err error
	switch what := r.PathValue("what"); what {
	case "workers":
		v, err = h.in.Workers(ctx)
	case "leases":
		v, err = h.in.Leases(ctx, r.URL.Query()["pipeline"]...)
	case "pipelines":
		v, err = h.in.Pipelines(ctx)
	case "runs":
		q := distributed.RunQuery{PipelineIDs: r.URL.Query()["pipeline"], Limit: HistoryShown, Failed: r.URL.Query().Get("failed") == "1"}
		if s := r.URL.Query().Get("limit"); s != "" {
			if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 0 {
				apiError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want a count, 0 for every run kept", s))
				return
			}
		}
		v, err = h.in.Runs(ctx, q)
	default:
		apiError(w, http.StatusNotFound, fmt.Errorf("unknown resource %q (workers, leases, pipelines, runs)", what))
		return
	}
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, distributed.ErrUnknownPipeline) {
			status = http.StatusNotFound
		}
		h.opts.Logger.Error("fleet ui: api request failed", "path", r.URL.Path, "error", err)
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
