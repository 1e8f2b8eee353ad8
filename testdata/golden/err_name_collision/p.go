// Package p declares names agoragen generates.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// PipelineOrders is declared by hand.
const PipelineOrders = "orders"

// GetWorker is declared by hand.
func GetWorker() {}

// BuildOrders builds a Job.
//
//agora:schedule every=1m
func BuildOrders(context.Context) (*Job, error) { return &Job{}, nil }
