// Package ctxalias names context.Context under another name.
package ctxalias

import "context"

// Context is context.Context.
type Context = context.Context
