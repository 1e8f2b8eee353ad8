// Package model holds pipeline types used by another package.
package model

import "context"

// Loader loads rows.
type Loader struct{}

// Run returns nil.
func (*Loader) Run(context.Context) error { return nil }

// Batch processes items of type T.
type Batch[T any] struct{ Items []T }

// Run returns nil.
func (*Batch[T]) Run(context.Context) error { return nil }

// Order is an item.
type Order struct{}
