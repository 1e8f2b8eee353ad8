package engine

import (
	"context"
	"log/slog"
	"time"
)

// heldLeaseLogInterval is the least time between two log lines about one
// pipeline's runs being skipped because another worker holds its lease. The
// skips in between are logged at debug level and counted in /status.
const heldLeaseLogInterval = time.Minute

// heldElsewhere logs a run skipped because another worker holds the lease:
// at info level, at most once per heldLeaseLogInterval, naming the holder
// and its lease's expiry when the coordinator can tell (LeaseHolderReporter).
// A replica whose peer died then says why it waits, and for how long. A
// peer holding the very slot asked for is the fleet working as meant (one
// replica per slot): that is logged at debug level and leaves the interval
// to a line that matters, so a replica without the lease does not log a
// line per slot.
func (r *Runner) heldElsewhere(runNumber int64) {
	now := r.now()
	r.mu.Lock()
	rs := r.rareLocked()
	last := rs.heldLogged
	due := last == 0 || now.UnixNano()-last >= int64(heldLeaseLogInterval) || now.UnixNano() < last
	if due {
		rs.heldLogged = now.UnixNano()
	}
	skipped := rs.skipped + 1 // this one is counted when published
	r.mu.Unlock()
	asked := Lease{RunNumber: runNumber}
	if !due || !r.enabled(slog.LevelInfo) {
		r.logRun(slog.LevelDebug, "lease held elsewhere, skipping", asked)
		return
	}
	attrs := []slog.Attr{slog.Uint64("skipped", skipped)}
	if rep := r.env.caps.LeaseHolderReporter; rep != nil {
		ctx, cancel := context.WithTimeout(r.env.hard, leaseAcquireTimeout)
		holder, held, err := rep.LeaseHolder(ctx, r.id())
		cancel()
		switch {
		case err != nil:
			attrs = append(attrs, slog.String("holder", "unknown"), slog.Any("holder_error", err))
		case held && holder.RunNumber == runNumber && runNumber != RunNumberAuto:
			r.mu.Lock()
			if rs.heldLogged == now.UnixNano() {
				rs.heldLogged = last
			}
			r.mu.Unlock()
			r.logRun(slog.LevelDebug, "lease held elsewhere, skipping", asked, slog.String("holder", holder.WorkerID))
			return
		case held:
			attrs = append(attrs,
				slog.String("holder", holder.WorkerID),
				slog.Int64("holder_run_number", holder.RunNumber),
				slog.Int64("holder_fencing_token", holder.FencingToken),
				slog.Time("holder_lease_expires", holder.ExpiresAt),
				slog.Duration("holder_lease_expires_in", max(holder.ExpiresAt.Sub(now), 0).Round(time.Millisecond)))
		default:
			attrs = append(attrs, slog.String("holder", "none now (released since)"))
		}
	}
	r.logRun(slog.LevelInfo, "lease held by another worker, skipping; a dead holder's runs are taken over when its lease or its worker record expires", asked, attrs...)
}
