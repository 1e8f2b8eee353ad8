//go:build ignore

package p

import "context"

// BuildIgnored is never built.
//
//agora:schedule id=ignored every=1m
func BuildIgnored(context.Context) (*Job, error) { return &Job{}, nil }
