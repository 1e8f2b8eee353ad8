// Package foreign returns pipeline types from other packages.
package foreign

import (
	"context"
	"time"

	"github.com/agora-etl/agora/testdata/golden/foreign_types/model"
	jobs "github.com/agora-etl/agora/testdata/golden/foreign_types/runtime"
)

// fmt is a package-level name the generated imports must avoid.
var fmt = time.Second

// OrderBatch is an alias of an instantiated generic type.
type OrderBatch = model.Batch[model.Order]

// BuildLoader returns a type from another package.
//
//agora:schedule every=1m
func BuildLoader(context.Context) (*model.Loader, error) { return &model.Loader{}, nil }

// BuildBatch returns an instantiated generic type.
//
//agora:schedule every=2m
func BuildBatch(context.Context) (*model.Batch[model.Order], error) { return nil, nil }

// BuildAliased returns an alias.
//
//agora:schedule every=3m
func BuildAliased(context.Context) (*OrderBatch, error) { return nil, nil }

// BuildJob returns a type from a package named runtime.
//
//agora:schedule every=4m
func BuildJob(context.Context) (jobs.Job, error) { return jobs.Job{}, nil }

var _ = fmt
