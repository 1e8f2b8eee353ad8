// Package runtime is a user package whose name clashes with agora's runtime.
package runtime

import "context"

// Job is a pipeline.
type Job struct{}

// Run returns nil.
func (Job) Run(context.Context) error { return nil }
