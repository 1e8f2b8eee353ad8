package distributed

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// A run history member is a JSON array, not the RunRecord object, because
// its size is most of what the history costs Redis: members of at most 64
// bytes (zset-max-listpack-value) keep a pipeline's completed key a compact
// listpack, where 300-byte objects turned it into a skip list and cost
// every run several microseconds of server time. The array is positional:
//
//	[run_number, token_offset, worker_id, duration_µs, outcome,
//	 triggered, in, out, dead_lettered, filtered, error, params]
//
// with trailing zero values left out and a success's outcome too
// (triggered is 1 for a triggered run, 2 for a backfill's slot), so a
// scheduled success by a worker named as runtime names them on Kubernetes
// ("etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34") is 64 bytes:
// [1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031].
// The fencing token is stored as its offset from the slot's start (tokens
// are the server's clock in microseconds, minted at the grant), see
// tokenBase. The pipeline is the key's, the end is the member's score
// (Unix ms), and the start is the end less the duration. Run number and
// token keep two members of one pipeline apart.
//
// A failed run's error text makes its member long, and a pipeline's key
// turns into a skip list for good once one member is over 64 bytes: a
// cost only pipelines that fail pay, and so do triggered runs with
// parameters: params is a JSON object of the run's parameters, after an
// error that is "" for a run without one, and readers that predate it
// ignore it. A reader that meets an object (a record in RunRecord's own
// JSON) decodes that too.

// tokenBase is what a run's fencing token is stored relative to: the
// slot's start in microseconds for a slot run (Unix seconds), the run
// number itself for runs numbered by their token or a counter too large
// to scale.
func tokenBase(run int64) int64 {
	const limit = math.MaxInt64 / 1_000_000
	if run > limit || run < -limit {
		return run
	}
	return run * 1_000_000
}

// outcomeCodes are the one-letter names of the outcomes in a member; an
// outcome without one is written in full.
var outcomeCodes = map[history.Outcome]string{
	history.OutcomeSucceeded: "s",
	history.OutcomeFailed:    "f",
	history.OutcomeCancelled: "c",
	history.OutcomeStale:     "x",
	history.OutcomeSlotDone:  "d",
}

var outcomeByCode = func() map[string]history.Outcome {
	m := make(map[string]history.Outcome, len(outcomeCodes))
	for o, c := range outcomeCodes {
		m[c] = o
	}
	return m
}()

// encodeRunMember returns rec as a run history member.
func encodeRunMember(rec *history.Record) string {
	b := make([]byte, 0, 64+len(rec.WorkerID)+len(rec.Error))
	b = append(b, '[')
	b = strconv.AppendInt(b, rec.RunNumber, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, rec.FencingToken-tokenBase(rec.RunNumber), 10)
	b = append(b, ',')
	b = appendJSONString(b, rec.WorkerID)
	b = append(b, ',')
	b = strconv.AppendInt(b, rec.Duration.Microseconds(), 10)

	// How the run came about: 0 scheduled, 1 triggered, 2 a backfill's
	// slot (a release before backfills reads 2 as triggered).
	triggered := int64(0)
	switch {
	case rec.Backfill:
		triggered = 2
	case rec.Triggered:
		triggered = 1
	}
	tail := []int64{triggered, rec.Records.In, rec.Records.Out, rec.Records.DeadLettered, rec.Records.Filtered}
	last := len(tail) - 1
	for last >= 0 && tail[last] == 0 {
		last--
	}
	if rec.Error != "" || len(rec.Params) > 0 {
		last = len(tail) - 1
	}
	if last >= 0 || rec.Outcome != history.OutcomeSucceeded {
		code, ok := outcomeCodes[rec.Outcome]
		if !ok {
			code = string(rec.Outcome)
		}
		b = append(b, ',')
		b = appendJSONString(b, code)
	}
	for _, v := range tail[:last+1] {
		b = append(b, ',')
		b = strconv.AppendInt(b, v, 10)
	}
	if rec.Error != "" || len(rec.Params) > 0 {
		b = append(b, ',')
		b = appendJSONString(b, rec.Error)
	}
	if len(rec.Params) > 0 {
		b = append(b, ',')
		p, _ := json.Marshal(rec.Params) // strings always marshal
		b = append(b, p...)
	}
	b = append(b, ']')
	return string(b)
}

// appendJSONString appends s as a JSON string. Worker ids and outcome
// codes are plain ASCII, which needs no escaping and no trip through
// encoding/json (whose reflection was most of a run's history cost).
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...) // a string always marshals
	}
	return append(b, q...)
}

// decodeRunMember reads a member of pipelineID's history scored endMs; ok
// is false for a member that is not a run record.
func decodeRunMember(pipelineID, member string, endMs float64) (rec history.Record, ok bool) {
	if len(member) == 0 {
		return rec, false
	}
	if member[0] == '{' {
		// An older record as an object: one without its pipeline, worker
		// and end ({"a":1}) is not a run, whatever else it holds.
		if json.Unmarshal([]byte(member), &rec) != nil || rec.PipelineID == "" || rec.WorkerID == "" || rec.End.IsZero() {
			return history.Record{}, false
		}
		return rec, true
	}
	if member[0] != '[' {
		return rec, false
	}
	var fields []json.RawMessage
	if json.Unmarshal([]byte(member), &fields) != nil || len(fields) < 4 {
		return rec, false
	}
	var durationUs, tokenOffset int64
	code := outcomeCodes[history.OutcomeSucceeded]
	if json.Unmarshal(fields[0], &rec.RunNumber) != nil ||
		json.Unmarshal(fields[1], &tokenOffset) != nil ||
		json.Unmarshal(fields[2], &rec.WorkerID) != nil ||
		json.Unmarshal(fields[3], &durationUs) != nil ||
		(len(fields) > 4 && json.Unmarshal(fields[4], &code) != nil) {
		return rec, false
	}
	rec.FencingToken = tokenBase(rec.RunNumber) + tokenOffset
	rec.Outcome = history.Outcome(code)
	if o, known := outcomeByCode[code]; known {
		rec.Outcome = o
	}
	counts := []*int64{nil, &rec.Records.In, &rec.Records.Out, &rec.Records.DeadLettered, &rec.Records.Filtered}
	for i, dst := range counts {
		if 5+i >= len(fields) {
			break
		}
		var v int64
		if json.Unmarshal(fields[5+i], &v) != nil {
			return rec, false
		}
		if dst == nil {
			rec.Triggered, rec.Backfill = v == 1, v == 2
		} else {
			*dst = v
		}
	}
	if len(fields) > 10 && json.Unmarshal(fields[10], &rec.Error) != nil {
		return rec, false
	}
	if len(fields) > 11 && (json.Unmarshal(fields[11], &rec.Params) != nil || runtime.ValidateParams(rec.Params) != nil) {
		return history.Record{}, false
	}
	rec.PipelineID = pipelineID
	rec.Duration = time.Duration(durationUs) * time.Microsecond
	rec.End = time.UnixMilli(int64(endMs))
	rec.Start = rec.End.Add(-rec.Duration)
	return rec, true
}
