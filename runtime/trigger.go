package runtime

// Trigger is a run-now request a coordinator claimed for this replica
// (FleetController.SetTriggerHandler): which pipeline to run, and with what.
// A struct, so that what a trigger carries can grow without changing the
// seam every coordinator implements.
type Trigger struct {
	// PipelineID names the pipeline to run.
	PipelineID string
	// Params are the run's parameters (ParamsFromContext); nil for none.
	Params map[string]string
}
