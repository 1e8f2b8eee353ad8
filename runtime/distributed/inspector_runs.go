package distributed

import (
	"context"
	"sort"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// RunQuery selects runs from the fleet's run history for Inspector.Runs.
type RunQuery struct {
	// PipelineIDs are the pipelines to read; none: every pipeline a live
	// worker runs. A named pipeline need not be live: its history is kept
	// after its workers are gone.
	PipelineIDs []string
	// Limit is how many runs at most, newest first (<= 0: every run kept).
	Limit int
	// Failed keeps only the runs that did not succeed.
	Failed bool
	// Since keeps only the runs that ended within this long before now (0:
	// all).
	Since time.Duration
}

// keep reports whether run passes q at now.
func (q RunQuery) keep(run history.Record, now time.Time) bool {
	if q.Failed && run.Outcome == history.OutcomeSucceeded {
		return false
	}
	return q.Since <= 0 || !run.End.Before(now.Add(-q.Since))
}

// Runs reads the run history of the pipelines q names, merged newest
// first (by end), filtered and cut to q.Limit: the data of "fleet runs".
// It returns an empty list, not an error, when the history is off or
// empty. History is read in one round trip for every pipeline.
func (in *Inspector) Runs(ctx context.Context, q RunQuery) ([]history.Record, error) {
	ids := q.PipelineIDs
	if len(ids) == 0 {
		ws, err := in.Workers(ctx)
		if err != nil {
			return nil, err
		}
		ids, _ = knownPipelines(ws)
	}
	histories, err := in.c.RunHistories(ctx, ids, 0)
	if err != nil {
		return nil, err
	}
	now := in.now()
	all := []history.Record{}
	for _, h := range histories {
		for _, run := range h {
			if q.keep(run, now) {
				all = append(all, run)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].End.After(all[j].End) })
	if q.Limit > 0 && len(all) > q.Limit {
		all = all[:q.Limit]
	}
	return all, nil
}
