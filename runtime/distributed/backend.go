package distributed

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// leaseBackend is where leases live. The coordinator keeps the worker
// registry, local bookkeeping, renewal scheduling, callbacks and fallback;
// a backend only talks to Redis. singleBackend keeps every lease on the
// primary; the quorum backend (Redlock, internal/quorum) plugs in through
// newQuorumBackend (quorum.go).
//
// Every method must honour ctx's deadline, return transport failures as
// errors (never as "not held"), and report the validity of what it
// granted relative to the moment its request was sent.
type leaseBackend interface {
	// prepare readies the backend after connecting (e.g. loads scripts).
	prepare(ctx context.Context) error
	// acquire tries to take the lease described by req, minting a fencing
	// token.
	acquire(ctx context.Context, req leaseRequest) (acquireResult, error)
	// renew extends every lease in refs, in one round trip per node; the
	// result has one entry per ref.
	renew(ctx context.Context, refs []leaseRef) []renewResult
	// release deletes the lease if ref still holds it; it reports whether it
	// did.
	release(ctx context.Context, ref leaseRef) (bool, error)
	// complete releases like release and records ref's slot as completed.
	complete(ctx context.Context, ref leaseRef) (bool, error)
	// validate reports whether token is the pipeline's lease in force.
	validate(ctx context.Context, pipelineID string, token int64) (bool, error)
	// holder reads the pipeline's lease in force, whoever holds it.
	holder(ctx context.Context, pipelineID string) (storedLease, bool, error)
	// ping checks that the backend can currently grant leases.
	ping(ctx context.Context) error
	// status describes the backend for /status (nil when nothing to add).
	status() any
	// close releases the backend's own connections (not the primary's).
	close() error
}

// leaseRequest asks for one pipeline's lease.
type leaseRequest struct {
	PipelineID string
	Owner      string // unique per coordinator instance
	Worker     string // the worker id
	// RecordKey is the worker's record key (boxed once): a grant needs the
	// record to exist and reads the state epoch from it.
	RecordKey any
	// Refresh says the grant must also refresh the record; false when a
	// write of it was confirmed recently enough that recordSent stands
	// instead (see beginAcquire).
	Refresh bool
	// Rerun asks, for a slot, to be told of an earlier slot whose holder
	// died before completing it (outcomeInterrupted) rather than take its
	// lease over for this slot (ScheduledPipeline.RerunInterrupted).
	Rerun bool
	// Ahead marks a slot request sent before its boundary (lease-ahead, see
	// ahead.go): the script grants it only from MaxLeaseAhead before the
	// slot by the server's clock, and answers outcomeAskAtSlot when it
	// decides nothing. Never set together with Rerun.
	Ahead      bool
	recordSent time.Time
	Mode       int64 // requested run number: > 0 slot (or count), RunNumberAuto, RunNumberOnce
	// Counted says Mode is a counted run (runtime.RunCounted), not a slot:
	// no slot rule applies to it (completed slot, state epoch, clock).
	Counted bool
}

// slot reports whether req asks for a slot, which the slot rules apply to.
func (r leaseRequest) slot() bool { return r.Mode > 0 && !r.Counted }

// ruleMode is Mode as the completion rules read it: a counted run marks
// nothing completed, as RunNumberAuto does not.
func (r leaseRequest) ruleMode() int64 {
	if r.Counted {
		return runtime.RunNumberAuto
	}
	return r.Mode
}

// acquireOutcome says what happened to an acquire attempt.
type acquireOutcome int

const (
	outcomeHeld          acquireOutcome = iota // another owner holds the lease
	outcomeAcquired                            // the lease is ours
	outcomeSlotCompleted                       // the slot already ran
	outcomeUnregistered                        // this worker's record is missing: write it, then ask again
	outcomeStateLost                           // the slot is older than the state epoch: it may have run
	outcomeInterrupted                         // an earlier slot's holder died: ask for RunNumber to re-run it
	outcomeAskAtSlot                           // an Ahead request decided nothing: ask again at the boundary
	outcomeFuture                              // the slot is ahead of the server's clock: refused (see clockskew.go)
	outcomeBackingOff                          // the pipeline backs off after a failed run (failures.go)
	outcomeFailStopped                         // the pipeline stopped after too many failed runs
	outcomeForeignData                         // the lease or token key holds data agora did not write: nothing granted
)

// acquireResult is the answer to a leaseRequest.
type acquireResult struct {
	Outcome   acquireOutcome
	Token     int64         // the new fencing token (0 unless acquired)
	RunNumber int64         // the lease's run number (the token for Auto and Once)
	ValidFor  time.Duration // lease validity counted from when the request was sent
	// Failures is the fleet's count of consecutive failed runs, for a
	// grant or a refusal of a failing pipeline (failures.go); RetryIn how
	// long its backoff still lasts.
	Failures int
	RetryIn  time.Duration
}

// leaseRef identifies a held lease in Redis.
type leaseRef struct {
	PipelineID string
	Owner      string
	Token      int64
	RunNumber  int64
	Mode       int64
	stored     string // value(), when already known
	// failures is the fleet's failure count the grant reported: a
	// completion then clears the failure state (failures.go).
	failures int
}

// value is the lease's stored form, "<token> <run> <owner>": renew and
// release compare it whole, so both owner and token must match.
func (r leaseRef) value() string {
	if r.stored != "" {
		return r.stored
	}
	return strconv.FormatInt(r.Token, 10) + " " + strconv.FormatInt(r.RunNumber, 10) + " " + r.Owner
}

// renewResult is the answer for one lease of a renewal round.
type renewResult struct {
	Held     bool          // extended; false with a nil Err means lost at once
	ValidFor time.Duration // validity counted from when the round was sent
	Err      error         // transport failure: retry until the deadline
}

// newLeaseBackend picks the backend for s: quorum leases when
// RedlockRedisURLs is set (the primary client still keeps the registry and
// the fencing counters), single-node leases otherwise.
func newLeaseBackend(primary redis.UniversalClient, s settings) (leaseBackend, error) {
	if len(s.quorum) > 0 {
		return newQuorumBackend(primary, s)
	}
	return newSingleBackend(primary, s, nil), nil
}
