// Package p imports only the agora runtime.
package p

import "github.com/agora-etl/agora/runtime"

// Build returns a pipeline but takes no context.
//
//agora:schedule every=1m
func Build() (runtime.Pipeline, error) { return nil, nil }
