package distributed

import (
	"sync"
	"time"
)

// outageLogEvery is the least time between two "Redis unreachable"
// warnings.
const outageLogEvery = time.Minute

// outageLog keeps the reachable/unreachable log lines few when Redis flaps.
// In a Redis Cluster with one master down, every request to that master
// fails and every other request succeeds, so the coordinator's view of
// Redis turns from reachable to unreachable and back many times a second.
// The first outage is logged, and its end; after that at most one outage
// per outageLogEvery is, with the count of those that were not, and only
// logged outages have their end logged.
type outageLog struct {
	mu       sync.Mutex
	lastWarn time.Time // when the last logged outage began; zero: none yet
	logged   bool      // the outage under way was logged
	unlogged int       // outages not logged since lastWarn
}

// down records the start of an outage at now. It reports whether to log
// it, and how many outages went unlogged since the last one that was.
func (o *outageLog) down(now time.Time) (logIt bool, unlogged int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.lastWarn.IsZero() && now.Sub(o.lastWarn) < outageLogEvery {
		o.logged = false
		o.unlogged++
		return false, 0
	}
	unlogged, o.unlogged = o.unlogged, 0
	o.lastWarn, o.logged = now, true
	return true, unlogged
}

// up records the end of an outage and reports whether to log it: only the
// end of a logged outage is.
func (o *outageLog) up() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	logIt := o.logged
	o.logged = false
	return logIt
}
