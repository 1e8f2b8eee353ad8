package distributed

import (
	"context"
	"fmt"
	"time"
)

// ControlResult is what Pause, Resume and Trigger did: one object of
// "fleet pause|resume|trigger --json".
type ControlResult struct {
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline_id"`
	// Action is "pause", "resume" or "trigger".
	Action string `json:"action"`
	// Changed is false when there was nothing to do (resuming a pipeline
	// that was not paused).
	Changed bool `json:"changed"`
	// Message says what happens next, for a person.
	Message string `json:"message"`
}

// Paused returns the fleet-wide pause flags, by pipeline id.
func (in *Inspector) Paused(ctx context.Context) (map[string]PauseInfo, error) {
	return in.c.PausedPipelines(ctx)
}

// Pause pauses pipelineID fleet-wide: every replica skips its scheduled
// attempts from its next poll on (within PollInterval); a run in flight
// finishes. by says who paused it ("": the user and host of this
// process); WithReason and WithUntil give the pause a reason and an end
// (at which every reader counts it resumed), WithFrom where it was set
// from. The pause is appended to the audit log. A pipeline no live worker
// runs is an error wrapping ErrUnknownPipeline.
func (in *Inspector) Pause(ctx context.Context, pipelineID, by string, opts ...ControlOption) (ControlResult, error) {
	if err := in.checkKnown(ctx, pipelineID); err != nil {
		return ControlResult{}, err
	}
	req, err := newControlRequest(append([]ControlOption{WithActor(by)}, opts...))
	if err != nil {
		return ControlResult{}, err
	}
	if !req.until.IsZero() && !req.until.After(in.now()) {
		return ControlResult{}, fmt.Errorf("distributed: pause %q until %s: that time has passed", pipelineID, req.until.UTC().Format(time.RFC3339))
	}
	p, err := in.c.pause(ctx, pipelineID, req)
	if err != nil {
		return ControlResult{}, err
	}
	in.audit(ctx, AuditEntry{At: p.At, PipelineID: pipelineID, Action: AuditPause, Actor: req.actor, From: req.from, Reason: req.reason, Until: p.Until})
	msg := fmt.Sprintf("paused %s: every replica skips its scheduled attempts within %s; a run in flight finishes", pipelineID, in.PollInterval())
	if !p.Until.IsZero() {
		msg += fmt.Sprintf("; it resumes by itself at %s", p.Until.Format(time.RFC3339))
	}
	return ControlResult{PipelineID: pipelineID, Action: "pause", Changed: true, Message: msg}, nil
}

// Resume clears pipelineID's pause; Changed says whether it was paused.
// A resume that cleared a pause is appended to the audit log, with
// WithActor, WithFrom and WithReason's values. A pipeline neither paused
// nor run by a live worker is an error wrapping ErrUnknownPipeline.
func (in *Inspector) Resume(ctx context.Context, pipelineID string, opts ...ControlOption) (ControlResult, error) {
	req, err := newControlRequest(opts)
	if err != nil {
		return ControlResult{}, err
	}
	was, err := in.c.Resume(ctx, pipelineID)
	if err != nil {
		return ControlResult{}, err
	}
	if !was {
		if err := in.checkKnown(ctx, pipelineID); err != nil {
			return ControlResult{}, err
		}
		return ControlResult{PipelineID: pipelineID, Action: "resume", Message: pipelineID + " was not paused"}, nil
	}
	in.audit(ctx, AuditEntry{PipelineID: pipelineID, Action: AuditResume, Actor: req.actor, From: req.from, Reason: req.reason})
	return ControlResult{PipelineID: pipelineID, Action: "resume", Changed: true,
		Message: fmt.Sprintf("resumed %s: its next scheduled slot runs", pipelineID)}, nil
}

// Trigger asks for one run of pipelineID now, on exactly one replica,
// under its own lease (see RedisWorkerCoordinator.Trigger); the schedule
// is unchanged. WithParams gives the run its parameters. The request is
// appended to the audit log, with WithActor, WithFrom, WithReason and
// WithParams' values. A paused pipeline is refused with an error wrapping
// ErrPipelinePaused, one no live worker runs with ErrUnknownPipeline, a
// pending request with other parameters with ErrTriggerPending.
func (in *Inspector) Trigger(ctx context.Context, pipelineID string, opts ...ControlOption) (ControlResult, error) {
	req, err := newControlRequest(opts)
	if err != nil {
		return ControlResult{}, err
	}
	if err := in.checkKnown(ctx, pipelineID); err != nil {
		return ControlResult{}, err
	}
	paused, err := in.Paused(ctx)
	if err != nil {
		return ControlResult{}, err
	}
	if _, ok := paused[pipelineID]; ok {
		return ControlResult{}, &inspectError{kind: ErrPipelinePaused,
			msg: fmt.Sprintf("distributed: pipeline %q is paused; resume it first", pipelineID)}
	}
	if err := in.c.writeTrigger(ctx, pipelineID, req.params); err != nil {
		return ControlResult{}, err
	}
	in.audit(ctx, AuditEntry{PipelineID: pipelineID, Action: AuditTrigger, Actor: req.actor, From: req.from, Reason: req.reason, Params: req.params})
	with := ""
	if len(req.params) > 0 {
		with = " with " + paramsText(req.params)
	}
	return ControlResult{PipelineID: pipelineID, Action: "trigger", Changed: true, Message: fmt.Sprintf(
		"triggered %s%s: one replica runs it within about %s, under its own lease; the schedule is unchanged", pipelineID, with, in.PollInterval())}, nil
}

// audit appends e after its action was done. A failure to append is
// logged, not returned: the action took effect, and reporting it failed
// would have the caller repeat it.
func (in *Inspector) audit(ctx context.Context, e AuditEntry) {
	if err := in.c.AppendAudit(ctx, e); err != nil {
		in.c.log.Warn("distributed: could not append to the audit log", "pipeline", e.PipelineID, "action", string(e.Action), "error", err)
	}
}

// AppendAudit appends e to its pipeline's audit log (see
// RedisWorkerCoordinator.AppendAudit), for an action taken elsewhere than
// through Pause, Resume and Trigger.
func (in *Inspector) AppendAudit(ctx context.Context, e AuditEntry) error {
	return in.c.AppendAudit(ctx, e)
}

// Audit returns the audit log, newest first: q.PipelineIDs' entries (none:
// every pipeline's), at most q.Limit (<= 0: the run history policy's
// Limit), within the policy's MaxAge.
func (in *Inspector) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	return in.c.AuditLog(ctx, q)
}
