package etl

import (
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The fields of a dead letter: the record the pipeline writes to its
// dead-letter queue for every (record, sink) rejection. A record two sinks
// reject yields two dead letters.
const (
	// DeadLetterRecord holds the record as the source produced it, before
	// any transform (a Record). Values JSON cannot carry are written as
	// text (see jsonSafe): a dead letter always encodes.
	DeadLetterRecord = "record"
	// DeadLetterOutput holds the record as the failing sink or transform
	// received it, after the transforms before it (a Record); present only
	// when a transform ran before the failure. Values JSON cannot carry are
	// written as text, as in DeadLetterRecord.
	DeadLetterOutput = "output"
	// DeadLetterPosition is where the source has the record, such as a
	// redis_stream entry id (Batch.Positions); present only when the
	// source says.
	DeadLetterPosition = "position"
	// DeadLetterError holds the sink's or the transform's reason, as text.
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

// deadLetter builds the dead letter of one rejection: src is the source's
// record, out the record the failing component received (nil when it is
// src), pos the source's position of the record ("" when unknown).
func deadLetter(src, out Record, pos string, reason error, sinkName string, sinkIndex int, lease runtime.Lease, at time.Time) Record {
	msg := "rejected"
	if reason != nil {
		msg = reason.Error()
	}
	safe, _ := jsonSafe(src, 1)
	dl := Record{
		DeadLetterRecord:       safe,
		DeadLetterError:        msg,
		DeadLetterSink:         sinkName,
		DeadLetterSinkIndex:    sinkIndex,
		DeadLetterPipelineID:   lease.PipelineID,
		DeadLetterRunNumber:    lease.RunNumber,
		DeadLetterFencingToken: lease.FencingToken,
		DeadLetterWorkerID:     lease.WorkerID,
		DeadLetterTime:         at.UTC().Format(time.RFC3339Nano),
	}
	if out != nil {
		dl[DeadLetterOutput], _ = jsonSafe(out, 1)
	}
	if pos != "" {
		dl[DeadLetterPosition] = pos
	}
	return dl
}
