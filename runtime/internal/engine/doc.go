// Package engine is the scheduling engine behind package runtime: the
// dispatcher and its timer heap, the runner of each pipeline, its attempts
// and the plans they carry out (catch-up, lease-ahead, deferral, after=,
// deadlines, triggers, fleet failures), and the readings /status and the
// metrics read.
//
// It is internal: runtime's public types are the contract, and runtime
// turns them into the engine's small types here (Spec, Schedule, Lease,
// Coordinator, Capabilities) at the boundary, once per Run, RunNow or
// Start. The engine never imports runtime.
package engine
