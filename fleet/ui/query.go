package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// outcomes are the values of the outcome filter, as runs carry them.
var outcomes = []string{
	string(history.OutcomeSucceeded), string(history.OutcomeFailed), string(history.OutcomeCancelled),
	string(history.OutcomeStale), string(history.OutcomeSlotDone),
}

// filterView is the filter form's values, as the query string gave them.
type filterView struct {
	Q, Worker, Outcome, From, To, Pipeline string
	Paused                                 bool
}

func readFilterView(q url.Values) filterView {
	return filterView{Q: q.Get("q"), Worker: q.Get("worker"), Outcome: q.Get("outcome"),
		From: q.Get("from"), To: q.Get("to"), Pipeline: q.Get("pipeline"), Paused: q.Get("paused") == "1"}
}

// pipelineFilter reads the front page's and /api/pipelines' filter: q (a
// part of the id), worker, outcome (of the last run, or "none") and
// paused=1.
func pipelineFilter(q url.Values) (distributed.PipelineFilter, error) {
	f := distributed.PipelineFilter{Text: q.Get("q"), Worker: q.Get("worker"), Paused: q.Get("paused") == "1"}
	if o := q.Get("outcome"); o != "" {
		if o != string(distributed.OutcomeNone) && !slices.Contains(outcomes, o) {
			return f, fmt.Errorf("outcome %q: want one of %v or none", o, outcomes)
		}
		f.Outcome = history.Outcome(o)
	}
	return f, nil
}

// runFilter reads the run filter: pipeline (repeatable), outcome
// (repeatable), failed=1, worker, q (text in the error), from and to
// (RFC 3339, or a date and time as a browser's datetime-local field sends
// it, in UTC).
func runFilter(q url.Values) (distributed.RunFilter, error) {
	f := distributed.RunFilter{PipelineIDs: nonEmpty(q["pipeline"]), Failed: q.Get("failed") == "1", Worker: q.Get("worker"), Text: q.Get("q")}
	for _, o := range nonEmpty(q["outcome"]) {
		if !slices.Contains(outcomes, o) {
			return f, fmt.Errorf("outcome %q: want one of %v", o, outcomes)
		}
		f.Outcomes = append(f.Outcomes, history.Outcome(o))
	}
	var err error
	if f.From, err = parseTime("from", q.Get("from")); err != nil {
		return f, err
	}
	if f.To, err = parseTime("to", q.Get("to")); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return f, fmt.Errorf("to %s is before from %s", q.Get("to"), q.Get("from"))
	}
	return f, nil
}

func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// timeLayouts are the forms from and to accept: RFC 3339, then what a
// datetime-local field sends (read as UTC).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q: want a time such as 2026-03-01T12:00:00Z or 2026-03-01T12:00 (UTC)", name, s)
}

// intParam reads a whole number from q[name], def when absent, within
// [lo, hi].
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s %q: want a whole number from %d to %d", name, s, lo, hi)
	}
	return n, nil
}

// withParam returns the path and query u with name set to value (removed
// when value is "").
func withParam(u *url.URL, name, value string) string {
	q := u.Query()
	if value == "" {
		q.Del(name)
	} else {
		q.Set(name, value)
	}
	s := u.Path
	if enc := q.Encode(); enc != "" {
		s += "?" + enc
	}
	return s
}
