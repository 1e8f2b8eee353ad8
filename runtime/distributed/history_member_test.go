package distributed

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

func TestRunMemberRoundTrips(t *testing.T) {
	end := time.UnixMilli(1764635401234)
	base := history.Record{PipelineID: "orders", RunNumber: 1764635400, FencingToken: 1764635400123456,
		WorkerID: "etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34", End: end, Duration: 2031 * time.Microsecond,
		Outcome: history.OutcomeSucceeded}
	base.Start = end.Add(-base.Duration)
	tests := []struct {
		name   string
		change func(r *history.Record)
		member string // "" when only the round trip is checked
	}{
		{"scheduled success", func(*history.Record) {}, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031]`},
		{"failure with an error", func(r *history.Record) {
			r.Outcome, r.Error = history.OutcomeFailed, `pq: "orders" \ it's gone`+"\n\u00e9"
		}, ""},
		{"triggered", func(r *history.Record) { r.Triggered = true }, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"s",1]`},
		{"backfill", func(r *history.Record) { r.Backfill = true }, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"s",2]`},
		{"backfill with params", func(r *history.Record) {
			r.Backfill, r.Params = true, map[string]string{"day": "2026-01-01"}
		}, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"s",2,0,0,0,0,"",{"day":"2026-01-01"}]`},
		{"triggered with params", func(r *history.Record) {
			r.Triggered, r.Params = true, map[string]string{"day": "2026-01-01"}
		}, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"s",1,0,0,0,0,"",{"day":"2026-01-01"}]`},
		{"failed with params", func(r *history.Record) {
			r.Triggered, r.Outcome, r.Error, r.Params = true, history.OutcomeFailed, "boom", map[string]string{"a": "x\"y", "b": ""}
		}, ""},
		{"records", func(r *history.Record) {
			r.Records = history.RecordCounts{In: 10, Out: 7, DeadLettered: 2, Filtered: 1}
		}, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"s",0,10,7,2,1]`},
		{"stale", func(r *history.Record) { r.Outcome = history.OutcomeStale }, `[1764635400,123456,"etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",2031,"x"]`},
		{"slot done", func(r *history.Record) { r.Outcome = history.OutcomeSlotDone }, ""},
		{"cancelled", func(r *history.Record) { r.Outcome = history.OutcomeCancelled }, ""},
		{"an outcome without a code", func(r *history.Record) { r.Outcome = "vanished" }, ""},
		{"run numbered by its token", func(r *history.Record) { r.RunNumber = r.FencingToken }, ""},
		{"a counter", func(r *history.Record) { r.RunNumber = 3 }, ""},
		{"a token before the slot", func(r *history.Record) { r.FencingToken = 1764635399750000 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := base
			tt.change(&rec)
			m := encodeRunMember(&rec)
			if tt.member != "" && m != tt.member {
				t.Errorf("member = %s\nwant     %s", m, tt.member)
			}
			var anyJSON []any
			if err := json.Unmarshal([]byte(m), &anyJSON); err != nil {
				t.Fatalf("member %s is not a JSON array: %v", m, err)
			}
			got, ok := decodeRunMember("orders", m, float64(end.UnixMilli()))
			if !ok {
				t.Fatalf("decode(%s) refused", m)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Errorf("decode(encode(r)) =\n%+v\nwant\n%+v", got, rec)
			}
		})
	}
	if m := encodeRunMember(&base); len(m) > 64 {
		t.Errorf("a scheduled success with a 37-byte worker id is %d bytes; over 64 the completed key stops being a listpack", len(m))
	}
}

func TestRunMemberDecodesObjectsAndRefusesOthers(t *testing.T) {
	old := history.Record{PipelineID: "p", RunNumber: 5, FencingToken: 9, WorkerID: "w", Outcome: history.OutcomeFailed, Error: "boom",
		End: time.UnixMilli(1_700_000_000_000).UTC()}
	b, _ := json.Marshal(old)
	if got, ok := decodeRunMember("p", string(b), 0); !ok || got.Error != "boom" || got.RunNumber != 5 {
		t.Errorf("an object record decoded as %+v, %v", got, ok)
	}
	for _, m := range []string{"", "slot", "[1,2]", `[1,2,3,4]`, `["a",2,"w",4]`, `[1,2,"w",4,5]`, `[1,2,"w",4,"s","x"]`, "{", "[1", `{"a":1}`, `{"pipeline_id":"p","worker_id":"w"}`,
		`[1,2,"w",4,"s",1,0,0,0,0,"",[1]]`, `[1,2,"w",4,"s",1,0,0,0,0,"",{"a-b":"1"}]`, `[1,2,"w",4,"s",1,0,0,0,0,"",{"a":1}]`} {
		if got, ok := decodeRunMember("p", m, 0); ok {
			t.Errorf("decode(%q) = %+v, want refused", m, got)
		}
	}
}

// The history's point of its format: on a real redis-server, a pipeline
// that keeps succeeding keeps a listpack-encoded completed key.
func TestRunHistoryKeepsTheCompletedKeyCompact(t *testing.T) {
	r := newReal(t)
	const worker = "etl-7d9f8c6b5-xk2p9-1-ab12cd34"
	c := r.started(r.options(10*time.Second), worker)
	// Slots of the last two minutes: their tokens are minted up to 110 s
	// after their start, where a scheduled run's are within a second (so
	// the worker id here is shorter than the one TestRunMemberRoundTrips
	// fits in 64 bytes).
	start := time.Now().Unix() - 110
	for i := range 110 {
		run := start + int64(i)
		mustAcquire(t, c, "p", run)
		end := time.Now()
		rec := history.Record{PipelineID: "p", Start: end.Add(-time.Millisecond), End: end, Duration: time.Millisecond, Outcome: history.OutcomeSucceeded}
		if err := c.FinishRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := c.RunHistory(context.Background(), "p", 0)
	if err != nil || len(runs) != 100 || runs[0].RunNumber != start+109 || runs[0].WorkerID != worker {
		t.Fatalf("history: %d runs, first %+v, %v", len(runs), runs[0], err)
	}
	enc, err := c.client.ObjectEncoding(context.Background(), c.keys.done("p")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if enc != "listpack" && enc != "ziplist" {
		t.Errorf("the completed key of a succeeding pipeline is a %s, want a listpack", enc)
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "w-1", "etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34", `a"b`, `a\b`, "tab\there", "<html>&", "é", "\x7f", "\u2028", "~ !#$%'()*+,-./:;=?@[]^_`{|}"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func BenchmarkEncodeRunMember(b *testing.B) {
	rec := history.Record{RunNumber: 1764635400, FencingToken: 1764635400123456,
		WorkerID: "etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34", Duration: 2031 * time.Microsecond, Outcome: history.OutcomeSucceeded}
	b.ReportAllocs()
	for b.Loop() {
		_ = encodeRunMember(&rec)
	}
}
