package p

import "context"

// BuildWindows is built only for windows.
//
//agora:schedule id=windows every=1m
func BuildWindows(context.Context) (*Job, error) { return &Job{}, nil }
