// Package p collects rarer mistakes.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildTwice declares two pipelines on one factory.
//
//agora:schedule every=1m id=a
//agora:schedule every=2m id=b
func BuildTwice(context.Context) (*Job, error) { return &Job{}, nil }

// BuildÜberSync derives an id that is not plain ASCII.
//
//agora:schedule once
func BuildÜberSync(context.Context) (*Job, error) { return &Job{}, nil }

// init cannot be referred to.
//
//agora:schedule once id=init
func init() {}
