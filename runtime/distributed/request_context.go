package distributed

import (
	"context"
	"time"
)

// requestContext bounds one Redis request by a deadline without arming a
// timer. The coordinator's client has ContextTimeoutEnabled, so go-redis
// turns Deadline into the socket deadlines of the request's write and read,
// and checks Err before each retry: that is all a single request needs.
//
// context.WithTimeout would arm a runtime timer per request, and adding a
// timer earlier than an idle thread's poll deadline wakes that thread: on
// the acquire+release hot path that costs 2-3 % of a cycle on a small
// machine. The price is that Done does not close at the deadline, so one
// may only be given to code that reads Deadline or Err: opContext hands it
// out for single requests and pipelines to one Redis, and a real timer to a
// quorum backend, whose fan-out waits on Done.
type requestContext struct {
	context.Context
	deadline time.Time
}

// newRequestContext returns parent bounded by timeout from now (or by
// parent's earlier deadline).
func newRequestContext(parent context.Context, timeout time.Duration) requestContext {
	deadline := time.Now().Add(timeout)
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return requestContext{Context: parent, deadline: deadline}
}

// Deadline returns the request's deadline.
func (c requestContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Err returns parent's error, or context.DeadlineExceeded once the deadline
// has passed.
func (c requestContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}
