package etl

import (
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The fields of a dead letter: the record the pipeline writes to its
// dead-letter queue for every (record, sink) rejection. A record two sinks
// reject yields two dead letters.
const (
	// DeadLetterRecord holds the rejected record, unchanged (a Record).
	DeadLetterRecord = "record"
	// DeadLetterError holds the sink's reason, as text.
	DeadLetterError = "error"
	// DeadLetterSink names the sink that rejected the record: its Name (see
	// Named), or "sinks[i]" after its position.
	DeadLetterSink = "sink"
	// DeadLetterSinkIndex is the sink's position among the pipeline's sinks
	// (int, from 0).
	DeadLetterSinkIndex = "sink_index"
	// DeadLetterPipelineID is the run's pipeline id ("" outside a pool run).
	DeadLetterPipelineID = "pipeline_id"
	// DeadLetterRunNumber is the run's number (int64; 0 outside a pool run).
	DeadLetterRunNumber = "run_number"
	// DeadLetterFencingToken is the run's fencing token (int64; 0 when the
	// lease is unfenced).
	DeadLetterFencingToken = "fencing_token"
	// DeadLetterWorkerID is the worker that ran the pipeline ("" outside a
	// pool run).
	DeadLetterWorkerID = "worker_id"
	// DeadLetterTime is when the rejection was handled: RFC 3339 with
	// nanoseconds, in UTC (a string, so every sink format writes it alike).
	DeadLetterTime = "time"
)

// deadLetter builds the dead letter of one rejection.
func deadLetter(rec Record, reason error, sinkName string, sinkIndex int, lease runtime.Lease, at time.Time) Record {
	msg := "rejected"
	if reason != nil {
		msg = reason.Error()
	}
	return Record{
		DeadLetterRecord:       rec,
		DeadLetterError:        msg,
		DeadLetterSink:         sinkName,
		DeadLetterSinkIndex:    sinkIndex,
		DeadLetterPipelineID:   lease.PipelineID,
		DeadLetterRunNumber:    lease.RunNumber,
		DeadLetterFencingToken: lease.FencingToken,
		DeadLetterWorkerID:     lease.WorkerID,
		DeadLetterTime:         at.UTC().Format(time.RFC3339Nano),
	}
}
