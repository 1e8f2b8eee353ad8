package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// A run-now request is one field of the <prefix>control:trigger hash,
// keyed by pipeline id. Its value is, for a request without parameters,
// the request time in Unix ms as a decimal number, exactly as before
// parameters existed (so every release reads it); for a request with
// parameters, a JSON object:
//
//	{"at":1764635400123,"params":{"day":"2026-01-01"}}
//
// A replica of a release that predates parameters claims such a request
// and runs the pipeline without them. Any other value was not written by
// agora: readers skip it with a WARN naming the key, and a trigger of that
// pipeline refuses to overwrite it (ErrForeignData).

// TriggerRequest is a run-now request not yet claimed by a replica.
type TriggerRequest struct {
	// At is when it was made.
	At time.Time `json:"at"`
	// Params are the run's parameters; nil for none.
	Params map[string]string `json:"params,omitempty"`
}

// triggerWire is the JSON form of a request with parameters.
type triggerWire struct {
	At     int64             `json:"at"`
	Params map[string]string `json:"params"`
}

// encodeTrigger returns the hash value of a request made at (Unix ms).
func encodeTrigger(atMs int64, params map[string]string) string {
	if len(params) == 0 {
		return strconv.FormatInt(atMs, 10)
	}
	b, _ := json.Marshal(triggerWire{At: atMs, Params: params}) // strings always marshal
	return string(b)
}

// decodeTrigger reads a hash value of the trigger hash; ok is false for a
// value agora did not write (why says what is wrong with it).
func decodeTrigger(v string) (req TriggerRequest, why string, ok bool) {
	if ms, isNum := parseSlotValue(v); isNum {
		return TriggerRequest{At: time.UnixMilli(ms)}, "", true
	}
	if !strings.HasPrefix(v, "{") {
		return TriggerRequest{}, "holds a value that is neither a time in Unix ms nor a request with parameters", false
	}
	var w triggerWire
	if err := json.Unmarshal([]byte(v), &w); err != nil || w.At <= 0 {
		return TriggerRequest{}, "holds a JSON value that is not a run-now request ({\"at\":<ms>,\"params\":{...}})", false
	}
	if err := runtime.ValidateParams(w.Params); err != nil {
		return TriggerRequest{}, "holds a run-now request with bad parameters: " + err.Error(), false
	}
	return TriggerRequest{At: time.UnixMilli(w.At), Params: w.Params}, "", true
}

// WithParams gives a triggered run its parameters (runtime.ParamsFromContext
// in the run, and the run's record in the history); they are kept with the
// request and in the audit log. Names must be identifiers
// (runtime.ValidateParams), or the trigger is refused with an error
// wrapping ErrInvalidControl. Ignored by Pause and Resume.
func WithParams(params map[string]string) ControlOption {
	return func(r *controlRequest) { r.params = maps.Clone(params) }
}

// ErrTriggerPending is wrapped by the error of a trigger with parameters
// other than those of a request for the same pipeline that no replica has
// claimed yet: requests coalesce, and coalescing would drop one set of
// parameters. Trigger again once the pending one was claimed (within about
// ControlPollInterval while a replica runs the pipeline).
var ErrTriggerPending = errors.New("distributed: a run-now request with other parameters is pending")

// writeTrigger sets pipelineID's run-now request to req's parameters, made
// now, unless a pending request holds other parameters (ErrTriggerPending)
// or a value agora did not write (ErrForeignData). The check and the write
// are one transaction on the hash.
func (c *RedisWorkerCoordinator) writeTrigger(ctx context.Context, pipelineID string, params map[string]string) error {
	what := "trigger " + strconv.Quote(pipelineID)
	key := c.keys.triggers()
	value := encodeTrigger(c.clock.Now().UnixMilli(), params)
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	var refused error
	txn := func(tx *redis.Tx) error {
		cur, err := tx.HGet(ctx, key, pipelineID).Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		default:
			pending, why, ok := decodeTrigger(cur)
			if !ok {
				refused = foreignKeyError(what, key, "field "+strconv.Quote(pipelineID)+" "+why)
				return nil
			}
			if !maps.Equal(pending.Params, params) {
				refused = fmt.Errorf("distributed: %s with %s: %w (%s, made %s); trigger again once a replica claimed it, within about %s",
					what, paramsText(params), ErrTriggerPending, paramsText(pending.Params), pending.At.UTC().Format(time.RFC3339), ControlPollInterval)
				return nil
			}
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, pipelineID, value)
			return nil
		})
		return err
	}
	var err error
	for range 10 { // WATCH lost a race with another trigger or a claim: read again
		if err = c.client.Watch(ctx, txn, key); !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	switch {
	case isWrongType(err):
		return foreignKeyError(what, key, "is not a hash of run-now requests")
	case err != nil:
		return c.failure(what, err)
	}
	return refused
}

// paramsText names a request's parameters in an error.
func paramsText(params map[string]string) string {
	if len(params) == 0 {
		return "no parameters"
	}
	return "parameters " + runtime.FormatParams(params)
}

// claimTrigger takes pipelineID's run-now request out of the hash, reading
// and deleting it in one transaction, so that the replica whose delete
// removed it runs it with exactly the parameters it removed. ok is false
// when another replica claimed it first, or when what it removed is not a
// request (logged: nothing is run for it).
func (c *RedisWorkerCoordinator) claimTrigger(ctx context.Context, pipelineID string) (req TriggerRequest, ok bool, err error) {
	key := c.keys.triggers()
	var get *redis.StringCmd
	var del *redis.IntCmd
	_, err = c.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, key, pipelineID)
		del = p.HDel(ctx, key, pipelineID)
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return TriggerRequest{}, false, nil // claimed elsewhere
	}
	if err != nil {
		return TriggerRequest{}, false, err
	}
	if del.Val() != 1 {
		return TriggerRequest{}, false, nil
	}
	req, why, ok := decodeTrigger(get.Val())
	if !ok {
		c.log.Warn("distributed: a claimed run-now request was not written by agora; not run",
			"key", key, "pipeline", pipelineID, "problem", why)
		return TriggerRequest{}, false, nil
	}
	return req, true, nil
}

// PendingTriggerRequests returns the run-now requests no replica has
// claimed yet, by pipeline id, with when they were made and their
// parameters. A value agora did not write is skipped, its key named once
// in a WARN.
func (c *RedisWorkerCoordinator) PendingTriggerRequests(ctx context.Context) (map[string]TriggerRequest, error) {
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	all, err := c.client.HGetAll(ctx, c.keys.triggers()).Result()
	if isWrongType(err) {
		c.warnForeign(c.keys.triggers(), "not a hash: no run-now request can be read from it")
		return map[string]TriggerRequest{}, nil
	}
	if err != nil {
		return nil, c.failure("read triggers", err)
	}
	return c.decodeTriggers(all), nil
}

// decodeTriggers reads the trigger hash's fields, skipping (with a WARN
// naming the key) those agora did not write.
func (c *RedisWorkerCoordinator) decodeTriggers(all map[string]string) map[string]TriggerRequest {
	out := make(map[string]TriggerRequest, len(all))
	for id, v := range all {
		req, why, ok := decodeTrigger(v)
		if !ok {
			c.warnForeign(c.keys.triggers(), "field "+strconv.Quote(id)+" "+why+"; it is not run")
			continue
		}
		out[id] = req
	}
	return out
}
