package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// runRecord is one "pipeline ran" log line of a replica.
type runRecord struct {
	Replica  string
	Pipeline string
	Number   int64
	Token    int64
	Rows     int64
}

// report collects the runs of every replica and prints them.
type report struct {
	mu   sync.Mutex
	out  io.Writer
	runs []runRecord
}

func newReport(out io.Writer) *report { return &report{out: out} }

// tokenNote explains the 16-digit numbers of the last column, once.
const tokenNote = "fencing tokens are the Redis clock in microseconds when the lease was granted (or the last token + 1): always increasing per pipeline"

func (r *report) header() {
	fmt.Fprintln(r.out, tokenNote)
	fmt.Fprintf(r.out, "%-16s %-22s %-10s %s\n", "PIPELINE", "SLOT", "REPLICA", "FENCING TOKEN")
}

// plural is n followed by one or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// line records a log line of replica; it reports false for lines that are
// not runs.
func (r *report) line(replica string, b []byte) bool {
	var rec struct {
		Msg      string `json:"msg"`
		Pipeline string `json:"pipeline"`
		Number   int64  `json:"run_number"`
		Token    int64  `json:"fencing_token"`
		Rows     int64  `json:"rows"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Msg != "pipeline ran" {
		return isQuiet(b)
	}
	one := runRecord{Replica: replica, Pipeline: rec.Pipeline, Number: rec.Number, Token: rec.Token, Rows: rec.Rows}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, one)
	fmt.Fprintf(r.out, "%-16s %-22s %-10s %d\n", one.Pipeline, slot(one.Number), one.Replica, one.Token)
	return true
}

// isQuiet reports whether a log line that is not a run is routine enough to
// leave out: info and debug lines. Warnings and errors are shown.
func isQuiet(b []byte) bool {
	var rec struct {
		Level string `json:"level"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return false
	}
	return rec.Level == "INFO" || rec.Level == "DEBUG"
}

// slot names a run: cron and every runs are numbered by the start of their
// slot in Unix seconds; continuous and once runs are numbered by the
// coordinator, with their fencing token.
func slot(n int64) string {
	const y2000, y2100 = 946684800, 4102444800
	if n >= y2000 && n < y2100 {
		return time.Unix(n, 0).UTC().Format("2006-01-02 15:04:05Z")
	}
	return "(numbered by token)"
}

// duplicates counts slots that more than one run claimed.
func (r *report) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]int{}
	dups := 0
	for _, one := range r.runs {
		k := fmt.Sprintf("%s/%d", one.Pipeline, one.Number)
		seen[k]++
		if seen[k] == 2 {
			dups++
		}
	}
	return dups
}

// summary prints, per pipeline, how many slots ran, on which replicas, and
// whether any slot ran twice.
func (r *report) summary() {
	r.mu.Lock()
	byPipeline := map[string][]runRecord{}
	for _, one := range r.runs {
		byPipeline[one.Pipeline] = append(byPipeline[one.Pipeline], one)
	}
	r.mu.Unlock()
	names := make([]string, 0, len(byPipeline))
	for name := range byPipeline {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(r.out, "\nsummary:\n")
	for _, name := range names {
		runs := byPipeline[name]
		perReplica := map[string]int{}
		slots := map[int64]int{}
		var maxToken int64
		for _, one := range runs {
			perReplica[one.Replica]++
			slots[one.Number]++
			maxToken = max(maxToken, one.Token)
		}
		var parts []string
		for _, rep := range sortedKeys(perReplica) {
			parts = append(parts, fmt.Sprintf("%s %d", rep, perReplica[rep]))
		}
		twice := 0
		for _, c := range slots {
			if c > 1 {
				twice++
			}
		}
		verdict := "each slot ran exactly once"
		if twice > 0 {
			verdict = plural(twice, "slot", "slots") + " ran more than once"
		}
		fmt.Fprintf(r.out, "  %-16s %-8s (%s), highest token %d: %s\n", name, plural(len(runs), "run", "runs"), strings.Join(parts, ", "), maxToken, verdict)
	}
	if len(names) == 0 {
		fmt.Fprintln(r.out, "  no runs")
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
