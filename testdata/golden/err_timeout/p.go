// Package p writes run timeouts that are not usable.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildZero has a zero timeout.
//
//agora:schedule every=1h timeout=0s
func BuildZero(context.Context) (*Job, error) { return &Job{}, nil }

// BuildWord has no duration.
//
//agora:schedule once timeout=long
func BuildWord(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTypo misspells the key.
//
//agora:schedule once timout=5m
func BuildTypo(context.Context) (*Job, error) { return &Job{}, nil }
