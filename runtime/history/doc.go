// Package history is the run history: what is kept of each run a pool
// makes (Record), how it ended (Outcome), how much of it is kept per
// pipeline (Policy, and its text form read by Parse), and Memory, the
// compact in-process store a WorkerPool is given with
// runtime.WithRunHistory when it runs without a shared coordinator.
//
// The package is a leaf: the runtime, the Redis coordinator, the fleet
// commands and the dashboard all speak these types, so none of them has
// to import the others to read a run.
package history
