//go:build !darwin

package p

import "context"

// BuildNotDarwin is built here, but not for darwin.
//
//agora:schedule id=not_darwin every=1m
func BuildNotDarwin(context.Context) (*Job, error) { return &Job{}, nil }
