package history

import (
	"encoding/binary"
	"math"
	"slices"
	"time"
)

// ring holds a pipeline's last runs for a Memory, encoded in one byte
// buffer: 10,000 pipelines running every second keep up to a million
// runs, which as Records (about 180 bytes each) would outweigh everything
// else a pool holds. The ring lives by value in the pipeline's entry of
// the Memory; its zero value is an empty ring.
//
// Runs are kept at the precision of the shared (Redis) history: the end
// in Unix milliseconds, the duration in microseconds (truncated toward
// zero, as Duration.Microseconds does), the start the end less the
// duration; so a pipeline's history reads the same from either
// coordinator. Times come back in the local zone without a monotonic
// clock reading, as they do from a shared coordinator's history.
//
// A run is a header byte, varints and strings (a uvarint length, then the
// bytes):
//
//	header   bits 0-2: the outcome's index in ringOutcomes, or
//	         ringOutcomeWritten for an outcome written out; bit 3:
//	         triggered; bit 4: an error text; bit 5: records in or out;
//	         bit 7: records dead-lettered or filtered;
//	         bit 6 (ringRare): a second flags byte follows, for what the
//	         local coordinator never records: a pipeline id other than the
//	         one the ring is for (Memory.Add keeps a run in its own
//	         pipeline's entry), a worker id other than the ring's
//	         first run's, a fencing token.
//	varints  the run number's step from the run before; the end's step in
//	         ms less the run number's step × 1000 (a slot's run number is
//	         in Unix seconds, so for a slot run this is the change of its
//	         lateness plus duration: 0 or a few ms, one byte); the
//	         duration in µs; when flagged, the records in and in less out
//	         (0 for most pipelines), the records dead-lettered and
//	         filtered, the token.
//	strings  when flagged: the error text, the outcome, the pipeline id,
//	         the worker id.
//
// A scheduled success costs 4 or 5 bytes. A fencing token is stored
// absolutely, not as a step from the run before: local leases carry token
// 0, so a token appears only in a record given to FinishRun for a lease
// the coordinator does not hold, and a step would need the previous token
// kept beside the ring (8 bytes per pipeline) to save a few bytes on such
// rare runs.
//
// Only the newest run's number and end are kept (last): the oldest's
// predecessor is the newest less the steps of the runs kept, summed when
// the runs are read, so dropping the oldest run skips its bytes and
// decodes nothing. Runs are appended at the end and dropped from the
// front. The buffer is compacted in place when a run does not fit at its
// end; it is grown, with an eighth to spare, when the runs kept fill it
// (a full ring of 100 scheduled successes holds about 500 bytes in a
// 576-byte buffer), and shrunk when its runs use under a quarter of a
// buffer of 1 KiB or more. So once it has grown to what its runs need, a
// run is recorded without allocating. The ring itself is 64 bytes.
type ring struct {
	buf      []byte // runs from head on, oldest first
	workerID string // of the ring's first run kept; others are written out
	// lastRun and lastEndMs are the newest run's number and end (Unix ms),
	// what the next run is written relative to.
	lastRun, lastEndMs int64
	head               int32 // offset of the oldest run kept
	n                  int32 // runs kept, at most math.MaxInt32
}

// Header bits of an encoded run.
const (
	ringOutcomeBits    = 0b111 // the outcome's code
	ringOutcomeWritten = 0b111 // code of an outcome outside ringOutcomes
	ringTriggered      = 1 << 3
	ringError          = 1 << 4
	ringRecords        = 1 << 5 // records in and out
	ringRare           = 1 << 6 // a second flags byte follows
	ringDropped        = 1 << 7 // records dead-lettered and filtered
)

// Bits of the second flags byte.
const (
	ringPipelineID = 1 << iota
	ringWorkerID
	ringToken
)

// ringOutcomes are the outcomes stored as a code in the header; the rest
// are written out.
var ringOutcomes = [...]Outcome{"", OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomeStale, OutcomeSlotDone}

// The codes must leave ringOutcomeWritten free.
var _ [ringOutcomeWritten - len(ringOutcomes)]struct{}

// ringMaxRun bounds the fixed part of an encoded run: two flags bytes and
// eight varints.
const ringMaxRun = 2 + 8*binary.MaxVarintLen64

// ringShrinkCap is the capacity from which a buffer four times larger
// than its runs need is shrunk.
const ringShrinkCap = 1024

func outcomeCode(o Outcome) byte {
	for i, known := range ringOutcomes {
		if o == known {
			return byte(i)
		}
	}
	return ringOutcomeWritten
}

// add records rec, the newest run of pipelineID (the pipeline whose ring
// this is), keeping at most limit runs.
func (r *ring) add(rec Record, pipelineID string, limit int) {
	limit = min(limit, math.MaxInt32)
	for int(r.n) >= limit && r.n > 0 {
		r.dropOldest()
	}
	if limit <= 0 {
		return
	}
	if r.n == 0 {
		r.workerID = rec.WorkerID
	}
	header := outcomeCode(rec.Outcome)
	var rare byte
	if rec.Triggered {
		header |= ringTriggered
	}
	if rec.Error != "" {
		header |= ringError
	}
	if c := rec.Records; c.In != 0 || c.Out != 0 {
		header |= ringRecords
	}
	if c := rec.Records; c.DeadLettered != 0 || c.Filtered != 0 {
		header |= ringDropped
	}
	if rec.PipelineID != pipelineID {
		rare |= ringPipelineID
	}
	if rec.WorkerID != r.workerID {
		rare |= ringWorkerID
	}
	if rec.FencingToken != 0 {
		rare |= ringToken
	}
	if rare != 0 {
		header |= ringRare
	}

	var fixed [ringMaxRun]byte
	f := append(fixed[:0], header)
	if rare != 0 {
		f = append(f, rare)
	}
	endMs := rec.End.UnixMilli()
	dRun := rec.RunNumber - r.lastRun // steps wrap around, and back when read
	f = binary.AppendVarint(f, dRun)
	f = binary.AppendVarint(f, endMs-r.lastEndMs-dRun*1000)
	f = binary.AppendVarint(f, rec.Duration.Microseconds())
	if header&ringRecords != 0 {
		f = binary.AppendVarint(f, rec.Records.In)
		f = binary.AppendVarint(f, rec.Records.In-rec.Records.Out) // usually 0
	}
	if header&ringDropped != 0 {
		f = binary.AppendVarint(f, rec.Records.DeadLettered)
		f = binary.AppendVarint(f, rec.Records.Filtered)
	}
	if rare&ringToken != 0 {
		f = binary.AppendVarint(f, rec.FencingToken)
	}

	need := len(f)
	if header&ringError != 0 {
		need += stringLen(rec.Error)
	}
	if header&ringOutcomeBits == ringOutcomeWritten {
		need += stringLen(string(rec.Outcome))
	}
	if rare&ringPipelineID != 0 {
		need += stringLen(rec.PipelineID)
	}
	if rare&ringWorkerID != 0 {
		need += stringLen(rec.WorkerID)
	}
	r.reserve(need)

	b := append(r.buf, f...)
	if header&ringError != 0 {
		b = appendString(b, rec.Error)
	}
	if header&ringOutcomeBits == ringOutcomeWritten {
		b = appendString(b, string(rec.Outcome))
	}
	if rare&ringPipelineID != 0 {
		b = appendString(b, rec.PipelineID)
	}
	if rare&ringWorkerID != 0 {
		b = appendString(b, rec.WorkerID)
	}
	r.buf = b
	r.lastRun, r.lastEndMs = rec.RunNumber, endMs
	r.n++
}

func stringLen(s string) int {
	n := 1
	for l := uint64(len(s)); l >= 0x80; l >>= 7 {
		n++
	}
	return n + len(s)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reserve makes room for need more bytes at the end of the buffer.
func (r *ring) reserve(need int) {
	kept := r.buf[r.head:]
	want := len(kept) + need
	switch {
	case want > cap(r.buf) || (cap(r.buf) >= ringShrinkCap && cap(r.buf) > 4*want):
		size := want + want/8
		// slices.Grow of an empty slice rounds up to the allocator's size
		// class, where append would double.
		r.buf = append(slices.Grow([]byte(nil), size), kept...)
	case len(r.buf)+need > cap(r.buf):
		r.buf = r.buf[:copy(r.buf, kept)]
	default:
		return
	}
	r.head = 0
}

// dropOldest forgets the oldest run: it skips its bytes.
func (r *ring) dropOldest() {
	_, _, size := ringSteps(r.buf[r.head:])
	r.n--
	if r.n == 0 {
		r.buf, r.head = r.buf[:0], 0
		return
	}
	next := int(r.head) + size
	if next > math.MaxInt32 { // keep head an int32
		r.buf = r.buf[:copy(r.buf, r.buf[next:])]
		next = 0
	}
	r.head = int32(next)
}

// ringSteps reads the run at the start of b without its strings: its run
// number's step, its end's step in ms (the run number's step × 1000
// included) and its length in bytes.
func ringSteps(b []byte) (dRun, dEnd int64, size int) {
	header, off := b[0], 1
	var rare byte
	if header&ringRare != 0 {
		rare, off = b[1], 2
	}
	dRun, n := binary.Varint(b[off:])
	off += n
	dEnd, n = binary.Varint(b[off:])
	off += n
	varints := 1 // the duration
	if header&ringRecords != 0 {
		varints += 2
	}
	if header&ringDropped != 0 {
		varints += 2
	}
	if rare&ringToken != 0 {
		varints++
	}
	for range varints {
		for b[off] >= 0x80 {
			off++
		}
		off++
	}
	texts := 0
	for _, flagged := range [...]bool{header&ringError != 0, header&ringOutcomeBits == ringOutcomeWritten, rare&ringPipelineID != 0, rare&ringWorkerID != 0} {
		if flagged {
			texts++
		}
	}
	for range texts {
		l, n := binary.Uvarint(b[off:])
		off += n + int(l)
	}
	return dRun, dEnd + dRun*1000, off
}

// decode reads the run at the start of b, whose predecessor ran as number
// prevRun and ended at prevEndMs; it returns the run's end in ms and its
// length in bytes.
func (r *ring) decode(b []byte, pipelineID string, prevRun, prevEndMs int64) (rec Record, endMs int64, size int) {
	header, off := b[0], 1
	var rare byte
	if header&ringRare != 0 {
		rare, off = b[1], 2
	}
	varint := func() int64 {
		v, n := binary.Varint(b[off:])
		off += n
		return v
	}
	str := func() string {
		l, n := binary.Uvarint(b[off:])
		s := string(b[off+n : off+n+int(l)])
		off += n + int(l)
		return s
	}
	dRun := varint()
	rec = Record{PipelineID: pipelineID, WorkerID: r.workerID, RunNumber: prevRun + dRun, Triggered: header&ringTriggered != 0}
	endMs = prevEndMs + dRun*1000 + varint()
	rec.Duration = time.Duration(varint()) * time.Microsecond
	rec.End = time.UnixMilli(endMs)
	rec.Start = rec.End.Add(-rec.Duration)
	if header&ringRecords != 0 {
		rec.Records.In = varint()
		rec.Records.Out = rec.Records.In - varint()
	}
	if header&ringDropped != 0 {
		rec.Records.DeadLettered, rec.Records.Filtered = varint(), varint()
	}
	if rare&ringToken != 0 {
		rec.FencingToken = varint()
	}
	if code := header & ringOutcomeBits; code < byte(len(ringOutcomes)) {
		rec.Outcome = ringOutcomes[code]
	}
	if header&ringError != 0 {
		rec.Error = str()
	}
	if header&ringOutcomeBits == ringOutcomeWritten {
		rec.Outcome = Outcome(str())
	}
	if rare&ringPipelineID != 0 {
		rec.PipelineID = str()
	}
	if rare&ringWorkerID != 0 {
		rec.WorkerID = str()
	}
	return rec, endMs, off
}

// newest returns up to limit records (<= 0: all) of pipelineID (the
// pipeline whose ring this is), newest first, that keep accepts (nil:
// all).
func (r *ring) newest(pipelineID string, limit int, keep func(Record) bool) []Record {
	kept := r.buf[r.head:]
	// The oldest run's predecessor: the newest less every step kept.
	run, endMs := r.lastRun, r.lastEndMs
	for off := 0; off < len(kept); {
		dRun, dEnd, size := ringSteps(kept[off:])
		run, endMs, off = run-dRun, endMs-dEnd, off+size
	}
	all := make([]Record, 0, r.n)
	for off := 0; off < len(kept); {
		rec, end, size := r.decode(kept[off:], pipelineID, run, endMs)
		all = append(all, rec)
		run, endMs, off = rec.RunNumber, end, off+size
	}
	out := make([]Record, 0, len(all))
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
