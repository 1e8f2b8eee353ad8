// Package p imports nothing: its factory cannot be one, and agoragen must
// say so rather than generate a worker without pipelines.
package p

// Build has no context and no pipeline.
//
//agora:schedule every=1m
func Build() error { return nil }
