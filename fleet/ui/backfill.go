package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/reltime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// backfillForm reads the pipeline page's backfill form: from and to (RFC
// 3339, or a duration from now such as -24h), parallel (empty: 1),
// reprocess (a checkbox) and the reason. What is wrong is said naming the
// field, and nothing is guessed.
func (h *Handler) backfillForm(r *http.Request, id string) (distributed.BackfillRequest, error) {
	f := r.PostForm
	now := h.opts.Now()
	req := distributed.BackfillRequest{PipelineID: id, Reprocess: f.Get("reprocess") != "", Reason: strings.TrimSpace(f.Get("reason"))}
	for _, field := range []struct {
		name string
		dst  *time.Time
	}{{"from", &req.From}, {"to", &req.To}} {
		v := strings.TrimSpace(f.Get(field.name))
		if v == "" {
			return req, fmt.Errorf("%s is empty: give an RFC 3339 time or a duration from now such as -24h", field.name)
		}
		t, err := reltime.Parse(v, now)
		if err != nil {
			return req, fmt.Errorf("%s %w", field.name, err)
		}
		*field.dst = t
	}
	if v := strings.TrimSpace(f.Get("parallel")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxFormParallel {
			return req, fmt.Errorf("parallel %q: want a whole number from 1 to %d", v, maxFormParallel)
		}
		req.Parallel = n
	}
	return req, nil
}

// maxFormParallel bounds the form's parallel, a typing mistake's reach.
const maxFormParallel = 1000
