package runtime

import (
	"context"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// Run numbers with a special meaning, passed to Coordinator.TryAcquireLease.
// A slot is made by SlotRun, and any other positive number is a counted run
// (see run_number.go and RunKindOf).
const (
	// RunNumberAuto asks the coordinator to number the run itself with a
	// fleet-wide increasing number and to apply no slot rule. Continuous
	// schedules use it.
	RunNumberAuto int64 = engine.RunNumberAuto
	// RunNumberOnce marks the single run of a Once schedule: after one replica
	// completes it, the others are refused with ErrSlotCompleted and stop.
	RunNumberOnce int64 = engine.RunNumberOnce
)

// ErrSlotCompleted is returned (with false) by TryAcquireLease when the slot
// asked for already completed successfully somewhere in the fleet. The pool
// skips such a slot without counting an error, and a Once pipeline stops.
//
// A run whose error wraps it (fencing.ErrSlotDone does: a database sink
// found the slot completed by another run) is treated the same way: it is
// not retried and counts no error (agora_attempts_skipped_total with reason
// "completed"), its lease is completed rather than released, so the fleet
// skips the slot too, it is logged at WARN, and the pipeline goes on to its
// next slot.
var ErrSlotCompleted = engine.ErrSlotCompleted

// ErrNilPipeline is reported when a factory returns a nil pipeline and no
// error.
var ErrNilPipeline = engine.ErrNilPipeline

// Coordinator decides which worker owns a run. The pool asks for a lease before
// every run and gives it back afterwards: completed after a success,
// released otherwise. The in-process coordinator the pool uses by default
// grants every free lease; distributed.RedisWorkerCoordinator shares leases
// across a fleet of replicas. What a coordinator can do beyond these methods
// (decide leases in batches, report health…) it says in one value,
// Capabilities, so that a coordinator wrapping another one forwards all of it
// with one method. What running a slot once needs (exclusive leases and
// completion) is in the methods, so no coordinator can leave it out; package
// runtime/coordinatortest checks all of it.
type Coordinator interface {
	// Start registers the worker and its pipelines and starts background work
	// such as heartbeats and lease renewal.
	Start(ctx context.Context, workerID string, pipelineIDs []string) error
	// Stop releases every held lease and unregisters the worker.
	Stop(ctx context.Context) error
	// TryAcquireLease tries to take the lease for one run. It returns false with
	// a nil error when another worker holds it, false with ErrSlotCompleted when
	// the slot already ran, and false with the cause when the coordinator cannot
	// tell (fail-safe: no lease, no run). runNumber says what the run is
	// (RunKindOf): a slot (SlotRun), a counted run (any other positive
	// number, such as 42), RunNumberAuto or RunNumberOnce; the completed-slot
	// rule applies to slots only.
	TryAcquireLease(ctx context.Context, pipelineID string, runNumber int64) (bool, error)
	// ReleaseLease gives up the lease held for pipelineID, if any, without
	// marking its run done: the pool calls it after a failed run, so the
	// slot may be asked for again.
	ReleaseLease(ctx context.Context, pipelineID string) error
	// CompleteLease gives up the lease held for pipelineID and records its
	// run as done, in one step: from then on the slot, the slots before it
	// and a completed RunNumberOnce are refused with ErrSlotCompleted, on
	// every worker the coordinator serves. The pool calls it instead of
	// ReleaseLease after a successful run; it is what keeps a slot from
	// running twice when replicas ask for it one after another.
	CompleteLease(ctx context.Context, pipelineID string) error
	// RenewLease extends the lease held for pipelineID.
	RenewLease(ctx context.Context, pipelineID string) error
	// ValidateLease reports whether token is the lease currently in force for
	// pipelineID.
	ValidateLease(ctx context.Context, pipelineID string, token int64) (bool, error)
	// CurrentLease returns the lease this worker holds for pipelineID.
	CurrentLease(pipelineID string) (Lease, bool)
	// SetLeaseLostCallback sets the function called, once per lease, when a
	// held lease is lost (expired, taken over, or not renewable in time).
	SetLeaseLostCallback(cb func(pipelineID string, lease Lease))
	// Capabilities returns the optional capabilities the coordinator has.
	// The pool calls it once, before Start, and keeps the answer.
	Capabilities() Capabilities
}

// RunCompleter is the method that completes a lease, which used to be an
// optional capability.
//
// Deprecated: CompleteLease is a method of every Coordinator, and
// Capabilities no longer carries a RunCompleter; call CompleteLease on the
// coordinator.
type RunCompleter interface {
	CompleteLease(ctx context.Context, pipelineID string) error
}

// LocalLeaser is the capability (Capabilities.LocalLeaser) of a
// coordinator whose leases live in this process's memory, as the
// LocalCoordinator's do: taking or giving one back waits on nothing but a
// lock, and a granted lease is never lost. The pool then asks it once per
// pipeline, at the pipeline's first attempt, for that pipeline's
// LocalLeases and takes and gives back every lease of the pipeline
// through them. Because such a call cannot block, the pool makes it
// without a context or a timeout and does not count the executor busy
// meanwhile; because such a lease cannot be lost, it does not ask
// CurrentLease whether a granted lease is still held. A run then costs no
// context, no timer and no map lookup, which is what lets one process
// schedule tens of thousands of pipelines without a remote coordinator.
type LocalLeaser interface {
	// LocalLeases returns the leases of pipelineID. The pool keeps the
	// answer for as long as it runs the pipeline.
	LocalLeases(pipelineID string) LocalLeases
}

// LocalLeases takes and gives back the leases of one pipeline for a
// LocalLeaser, under the rules of the Coordinator methods each one stands
// for. The pool calls them for one run at a time.
type LocalLeases interface {
	// Acquire is TryAcquireLease at now, and returns the lease granted as
	// CurrentLease would.
	Acquire(runNumber int64, now time.Time) (Lease, bool, error)
	// Release is ReleaseLease, or CompleteLease when completed is true.
	Release(completed bool)
	// Record adds rec, a run whose lease was given back by Release, to the
	// run history the coordinator's RunRecorder keeps. The pool calls it
	// only when Capabilities.RunRecorder is set.
	Record(rec history.Record)
}

// BatchLeaser is the capability (Capabilities.BatchLeaser) of coordinators
// that can decide many lease requests in one round trip. The pool then asks for the leases of the runs
// due together (a cron second shared by thousands of pipelines) in batches,
// one goroutine per batch, instead of one blocking request per run.
type BatchLeaser interface {
	// TryAcquireLeases is TryAcquireLease for every request; the reply at
	// index i answers reqs[i].
	TryAcquireLeases(ctx context.Context, reqs []LeaseRequest) []LeaseReply
}

// LeaseDeferrer is the capability (Capabilities.LeaseDeferrer) of a
// BatchLeaser that spreads a fleet's lease requests: when every replica asks for every slot, all but one of
// them ask in vain. DeferLease says, per request, how long this worker
// should wait before asking, because another live worker is expected to
// take the slot first (0: ask now). The pool sends a batch's other requests
// at once and the deferred ones after the longest of their delays, in a
// second call; a deferred request still gets the lease when nobody took
// the slot meanwhile (the expected worker died or is slow), only that much
// later.
type LeaseDeferrer interface {
	DeferLease(req LeaseRequest) time.Duration
}

// LeaseAheader is the capability (Capabilities.LeaseAheader) of a
// BatchLeaser that can grant a cron slot's lease a little before the slot's boundary (lease-ahead), so that at the
// boundary the run only has to start. The pool then asks LeaseAhead before
// each slot (never more than half the interval before it), with Ahead set
// in the LeaseRequest; see docs/distributed.md, "Lease-ahead".
type LeaseAheader interface {
	// LeaseAhead is how long before a slot the pool may ask for its lease;
	// 0 turns lease-ahead off. The pool uses at most MaxLeaseAhead.
	LeaseAhead() time.Duration
}

// MaxLeaseAhead bounds how long before a slot the pool asks for its lease.
const MaxLeaseAhead = engine.MaxLeaseAhead

// LeaseRequest asks a BatchLeaser for one pipeline's lease.
type LeaseRequest struct {
	PipelineID string
	// RunNumber is what TryAcquireLease takes: the pool asks for slots
	// (SlotRun), RunNumberAuto and RunNumberOnce.
	RunNumber int64
	// Ahead says the request is sent before its slot's boundary
	// (LeaseAheader). A grant is for that slot only. A reply that wraps
	// ErrAskAtSlot decided nothing, and the pool asks again at the
	// boundary, without deferring; any other error decided nothing either,
	// and the pool asks at the boundary as without lease-ahead (deferring
	// when its LeaseDeferrer says). A refusal without error (held) or with
	// ErrSlotCompleted stands for the slot.
	Ahead bool
}

// LeaseReply is what TryAcquireLease would have returned for one
// LeaseRequest.
type LeaseReply struct {
	Acquired bool
	Err      error
}

// HealthReporter is the capability (Capabilities.HealthReporter) of
// coordinators that can say whether they are usable. /readyz answers 503 while Healthy returns an error.
type HealthReporter interface {
	Healthy(ctx context.Context) error
}

// StatusReporter is the capability (Capabilities.StatusReporter) of
// coordinators with state worth showing in /status (for example reachability of each Redis node). The value must
// marshal to JSON.
type StatusReporter interface {
	Status() any
}

// LeaseHolderReporter is the capability (Capabilities.LeaseHolderReporter)
// of coordinators that can say who holds a lease they refused. When a run
// is skipped because the lease is held elsewhere, the pool asks (at most
// once a minute per pipeline) and logs the holder and when its lease
// expires: a dead holder's runs are taken over then.
type LeaseHolderReporter interface {
	// LeaseHolder returns the lease in force for pipelineID, whichever worker
	// holds it, and false when none is. ExpiresAt is by this worker's clock,
	// and is when the lease stops keeping others out: its expiry, or sooner
	// when the coordinator takes a dead holder's lease over sooner (the
	// Redis one does when the holder's worker record expires). AcquiredAt
	// may be zero when the coordinator does not know it.
	LeaseHolder(ctx context.Context, pipelineID string) (Lease, bool, error)
}
