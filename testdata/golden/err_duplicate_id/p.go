// Package p uses one id twice.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildOrders builds a Job.
//
//agora:schedule every=1m
func BuildOrders(context.Context) (*Job, error) { return &Job{}, nil }

// BuildMoreOrders builds a Job.
//
//agora:schedule every=1m id=orders
func BuildMoreOrders(context.Context) (*Job, error) { return &Job{}, nil }
