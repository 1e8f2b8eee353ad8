package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/examples/etl"
	"github.com/agora-etl/agora/runtime"
)

// tables names the warehouse table each pipeline loads.
var tables = map[string]string{
	etl.PipelineEventsConsumer: "events",
	etl.PipelineInventorySync:  "inventory",
	etl.PipelineOrdersRollup:   "orders_rollup",
}

// staleWriterScene shows what the fencing token is for. After the fleet
// stopped, it replays the load of a pipeline's oldest run, with that run's
// token, into the warehouse the replicas loaded: newer tokens have loaded
// the table since, exactly as when a replica whose lease was taken over
// wakes up and writes, so the warehouse must refuse it and keep its rows.
func staleWriterScene(out io.Writer, rep *report, path string) error {
	old, newest, ok := staleCandidate(rep)
	if !ok {
		fmt.Fprintln(out, "\nstale writer: no pipeline ran twice, nothing to replay")
		return nil
	}
	table := tables[old.Pipeline]
	w := etl.NewWarehouse(path)
	defer w.Close()
	before, err := w.Rows(table)
	if err != nil {
		return err
	}
	ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{
		PipelineID: old.Pipeline, WorkerID: old.Replica, RunNumber: old.Number, FencingToken: old.Token})
	fmt.Fprintf(out, "\nstale writer: %s loads %s again with its old token %d (%s has since loaded it with token %d)\n",
		old.Replica, table, old.Token, newest.Replica, newest.Token)
	err = w.Load(ctx, table, 1)
	var stale *fencing.StaleWriterError
	if !errors.As(err, &stale) {
		return fmt.Errorf("the warehouse did not refuse the stale writer: %v", err)
	}
	after, err := w.Rows(table)
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("the refused load changed %s: %d rows, then %d", table, before, after)
	}
	fmt.Fprintf(out, "  refused: token %d < stored token %d; %s keeps its %d rows\n", stale.Token, stale.Stored, table, after)
	return nil
}

// staleCandidate picks the pipeline run with the lowest token among
// pipelines that ran again later with a higher one, and that later run.
func staleCandidate(rep *report) (old, newest runRecord, ok bool) {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	first, last := map[string]runRecord{}, map[string]runRecord{}
	for _, r := range rep.runs {
		if _, known := tables[r.Pipeline]; !known || r.Token == 0 {
			continue
		}
		if f, seen := first[r.Pipeline]; !seen || r.Token < f.Token {
			first[r.Pipeline] = r
		}
		if l, seen := last[r.Pipeline]; !seen || r.Token > l.Token {
			last[r.Pipeline] = r
		}
	}
	for _, p := range []string{etl.PipelineOrdersRollup, etl.PipelineInventorySync, etl.PipelineEventsConsumer} {
		if f, seen := first[p]; seen && last[p].Token > f.Token {
			return f, last[p], true
		}
	}
	return runRecord{}, runRecord{}, false
}
