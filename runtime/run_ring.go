package runtime

import (
	"encoding/binary"
	"time"
)

// runRing holds a pipeline's last runs for the LocalCoordinator's history,
// encoded in one byte buffer: 10,000 pipelines running every second keep
// up to a million runs, which as RunRecords (about 180 bytes each, plus
// the slack of growing slices) would outweigh everything else a pool holds.
//
// Each run is a flags byte and varints, each field relative to the run
// before it, so a run on schedule costs about a dozen bytes: the run
// number's step; the start's step less the run number's step in seconds
// (for a cron pipeline, the change of its lateness); the duration; the
// wall-clock end less start less duration (0 unless the clock was set
// during the run); the fencing token's step. Error texts, record counts,
// other outcomes and ids differing from the ring's follow only when there
// are some. Runs are appended at the end and dropped from the front,
// where base keeps the values of the run just dropped, so the next one
// still decodes; the buffer is compacted in place, so once it has grown a
// run is recorded without allocating.
//
// Times come back in the local zone and without a monotonic clock
// reading, as they would from a shared coordinator's history.
type runRing struct {
	pipelineID, workerID string // of the first run; others are written out
	buf                  []byte
	head                 int // offset of the oldest run kept
	n                    int // runs kept
	base, tail           ringState
}

// ringState is the values a run's fields are relative to.
type ringState struct {
	runNumber, start, token int64
}

// Flags of an encoded run.
const (
	ringTriggered = 1 << iota
	ringError
	ringRecords
	ringOutcome // an outcome outside ringOutcomes, written out
	ringPipelineID
	ringWorkerID
)

// ringOutcomes are the outcomes stored as a code (bits 6-7 of the flags
// and a byte); the rest are written out.
var ringOutcomes = []RunOutcome{"", OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomeStale, OutcomeSlotDone}

func outcomeCode(o RunOutcome) (byte, bool) {
	for i, known := range ringOutcomes {
		if o == known {
			return byte(i), true
		}
	}
	return 0, false
}

func (r *runRing) add(rec RunRecord, limit int) {
	for r.n >= limit && r.n > 0 {
		r.dropOldest()
	}
	if limit <= 0 {
		return
	}
	if r.n == 0 && len(r.buf) == 0 {
		r.pipelineID, r.workerID = rec.PipelineID, rec.WorkerID
	}
	r.compact()
	var flags byte
	if rec.Triggered {
		flags |= ringTriggered
	}
	if rec.Error != "" {
		flags |= ringError
	}
	if rec.Records != (RecordCounts{}) {
		flags |= ringRecords
	}
	code, known := outcomeCode(rec.Outcome)
	if !known {
		flags |= ringOutcome
	}
	if rec.PipelineID != r.pipelineID {
		flags |= ringPipelineID
	}
	if rec.WorkerID != r.workerID {
		flags |= ringWorkerID
	}
	start, end := rec.Start.UnixNano(), rec.End.UnixNano()
	b := append(r.buf, flags, code)
	dRun := rec.RunNumber - r.tail.runNumber
	b = binary.AppendVarint(b, dRun)
	b = binary.AppendVarint(b, start-r.tail.start-dRun*int64(time.Second))
	b = binary.AppendVarint(b, int64(rec.Duration))
	b = binary.AppendVarint(b, end-start-int64(rec.Duration))
	b = binary.AppendVarint(b, rec.FencingToken-r.tail.token)
	if flags&ringError != 0 {
		b = appendString(b, rec.Error)
	}
	if flags&ringRecords != 0 {
		c := rec.Records
		b = binary.AppendVarint(b, c.In)
		b = binary.AppendVarint(b, c.Out)
		b = binary.AppendVarint(b, c.DeadLettered)
		b = binary.AppendVarint(b, c.Filtered)
	}
	if flags&ringOutcome != 0 {
		b = appendString(b, string(rec.Outcome))
	}
	if flags&ringPipelineID != 0 {
		b = appendString(b, rec.PipelineID)
	}
	if flags&ringWorkerID != 0 {
		b = appendString(b, rec.WorkerID)
	}
	r.buf = b
	r.tail = ringState{runNumber: rec.RunNumber, start: start, token: rec.FencingToken}
	r.n++
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// dropOldest forgets the oldest run; base becomes its values.
func (r *runRing) dropOldest() {
	rec, next := r.decode(r.head, r.base)
	r.base = ringState{runNumber: rec.RunNumber, start: rec.Start.UnixNano(), token: rec.FencingToken}
	r.head = next
	r.n--
	if r.n == 0 {
		r.buf, r.head = r.buf[:0], 0
	}
}

// compact moves the runs kept to the front of the buffer once the dropped
// ones take more room than they do.
func (r *runRing) compact() {
	if r.head > 0 && r.head >= len(r.buf)-r.head {
		r.buf = r.buf[:copy(r.buf, r.buf[r.head:])]
		r.head = 0
	}
}

// decode reads the run at off, whose predecessor's values are prev; it
// returns the offset of the next run.
func (r *runRing) decode(off int, prev ringState) (RunRecord, int) {
	b := r.buf[off:]
	flags, code := b[0], b[1]
	b = b[2:]
	varint := func() int64 {
		v, n := binary.Varint(b)
		b = b[n:]
		return v
	}
	str := func() string {
		l, n := binary.Uvarint(b)
		s := string(b[n : n+int(l)])
		b = b[n+int(l):]
		return s
	}
	dRun := varint()
	rec := RunRecord{PipelineID: r.pipelineID, WorkerID: r.workerID, RunNumber: prev.runNumber + dRun, Triggered: flags&ringTriggered != 0}
	start := prev.start + dRun*int64(time.Second) + varint()
	rec.Duration = time.Duration(varint())
	end := start + int64(rec.Duration) + varint()
	rec.FencingToken = prev.token + varint()
	rec.Start, rec.End = time.Unix(0, start), time.Unix(0, end)
	if int(code) < len(ringOutcomes) {
		rec.Outcome = ringOutcomes[code]
	}
	if flags&ringError != 0 {
		rec.Error = str()
	}
	if flags&ringRecords != 0 {
		rec.Records = RecordCounts{In: varint(), Out: varint(), DeadLettered: varint(), Filtered: varint()}
	}
	if flags&ringOutcome != 0 {
		rec.Outcome = RunOutcome(str())
	}
	if flags&ringPipelineID != 0 {
		rec.PipelineID = str()
	}
	if flags&ringWorkerID != 0 {
		rec.WorkerID = str()
	}
	return rec, len(r.buf) - len(b)
}

// newest returns up to limit records (<= 0: all), newest first, that keep
// accepts (nil: all).
func (r *runRing) newest(limit int, keep func(RunRecord) bool) []RunRecord {
	all := make([]RunRecord, 0, r.n)
	off, prev := r.head, r.base
	for range r.n {
		rec, next := r.decode(off, prev)
		all = append(all, rec)
		off, prev = next, ringState{runNumber: rec.RunNumber, start: rec.Start.UnixNano(), token: rec.FencingToken}
	}
	out := make([]RunRecord, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		if keep != nil && !keep(all[i]) {
			continue
		}
		out = append(out, all[i])
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}
