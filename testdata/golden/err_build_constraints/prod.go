//go:build prod

package p

import "context"

// BuildProd is built only with -tags prod.
//
//agora:schedule id=prod every=1m
func BuildProd(context.Context) (*Job, error) { return &Job{}, nil }
