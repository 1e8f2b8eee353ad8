package distributed

import (
	"context"
	"fmt"
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
// finishes. by says where it was paused from ("": the user and host of
// this process). A pipeline no live worker runs is an error wrapping
// ErrUnknownPipeline.
func (in *Inspector) Pause(ctx context.Context, pipelineID, by string) (ControlResult, error) {
	if err := in.checkKnown(ctx, pipelineID); err != nil {
		return ControlResult{}, err
	}
	if err := in.c.Pause(ctx, pipelineID, by); err != nil {
		return ControlResult{}, err
	}
	return ControlResult{PipelineID: pipelineID, Action: "pause", Changed: true, Message: fmt.Sprintf(
		"paused %s: every replica skips its scheduled attempts within %s; a run in flight finishes", pipelineID, in.PollInterval())}, nil
}

// Resume clears pipelineID's pause; Changed says whether it was paused. A
// pipeline neither paused nor run by a live worker is an error wrapping
// ErrUnknownPipeline.
func (in *Inspector) Resume(ctx context.Context, pipelineID string) (ControlResult, error) {
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
	return ControlResult{PipelineID: pipelineID, Action: "resume", Changed: true,
		Message: fmt.Sprintf("resumed %s: its next scheduled slot runs", pipelineID)}, nil
}

// Trigger asks for one run of pipelineID now, on exactly one replica,
// under its own lease (see RedisWorkerCoordinator.Trigger); the schedule
// is unchanged. A paused pipeline is refused with an error wrapping
// ErrPipelinePaused, one no live worker runs with ErrUnknownPipeline.
func (in *Inspector) Trigger(ctx context.Context, pipelineID string) (ControlResult, error) {
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
	if err := in.c.Trigger(ctx, pipelineID); err != nil {
		return ControlResult{}, err
	}
	return ControlResult{PipelineID: pipelineID, Action: "trigger", Changed: true, Message: fmt.Sprintf(
		"triggered %s: one replica runs it within about %s, under its own lease; the schedule is unchanged", pipelineID, in.PollInterval())}, nil
}
