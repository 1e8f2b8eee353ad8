package distributed

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Keys under the prefix that agora did not write (a hand-made SET, a tool
// sharing the prefix, a half-finished migration) are skipped by whatever
// reads them, with one WARN per key naming it, so one foreign key cannot
// fail every fleet command or stall a worker.

// isWrongType reports whether err is Redis refusing an operation on a key
// of another type (WRONGTYPE).
func isWrongType(err error) bool {
	var re redis.Error
	return err != nil && errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// warnForeign logs, once per key for the life of c, that key was skipped
// because it does not hold what agora writes there (why says what it holds
// instead, or what is wrong with it).
func (c *RedisWorkerCoordinator) warnForeign(key, why string) {
	if _, seen := c.foreignWarned.LoadOrStore(key, true); seen {
		return
	}
	c.log.Warn("distributed: skipping a key agora did not write in this shape; delete or rename it if nothing else uses it",
		slog.String("key", key), slog.String("problem", why))
}

// ErrForeignData is wrapped by the error of an operation that must write or
// parse a key holding data agora did not write there: a control key of
// another type, a token or lease value that does not parse. The message
// names the key and what to do; agora never overwrites such a key itself.
var ErrForeignData = errors.New("distributed: a key holds data agora did not write")

// foreignKeyError is the error of what on key, which holds something else
// (why).
func foreignKeyError(what, key, why string) error {
	return fmt.Errorf("distributed: %s: %w: %s %s; delete it (DEL %s) if nothing else uses it", what, ErrForeignData, key, why, key)
}
