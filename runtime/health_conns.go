package runtime

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The health server's timeouts. A probe or a scrape sends a few hundred
// bytes and reads at most a few megabytes of /metrics or /status; a
// connection slower than these is a slow client or an attack holding a
// descriptor the runs need.
const (
	healthReadHeaderTimeout = 5 * time.Second
	healthReadTimeout       = 10 * time.Second
	healthWriteTimeout      = 30 * time.Second
	healthIdleTimeout       = 30 * time.Second
	healthMaxHeaderBytes    = 16 << 10
)

// Bounds of the health server's connection cap, which is a sixteenth of
// the process's descriptor limit: the rest stay for the runs.
const (
	minHealthConns = 4
	maxHealthConns = 128
	// healthShedLogInterval throttles the WARN a flood of connections
	// causes to one line per interval.
	healthShedLogInterval = time.Minute
)

// healthConnCap is how many connections the health server holds at once in
// a process allowed nofile descriptors.
func healthConnCap(nofile uint64) int {
	return int(min(max(nofile/16, minHealthConns), maxHealthConns))
}

// connGuard is a listener that holds at most max connections. When a new
// one arrives at the cap, the connection idle (between requests, or not
// yet sent one) the longest is closed to make room: a probe that is being
// answered is never cut, and a flood of held connections cannot keep a new
// probe out. Only when every held connection is being answered is the new
// one closed. http.Server reports states through connState.
type connGuard struct {
	net.Listener
	max    int
	logger *slog.Logger

	mu      sync.Mutex
	conns   map[net.Conn]*guardedState
	seq     uint64 // orders state changes: the lowest idle seq waited longest
	shed    uint64 // connections closed at the cap since the last log line
	lastLog time.Time
}

type guardedState struct {
	state http.ConnState
	seq   uint64
}

func newConnGuard(ln net.Listener, max int, logger *slog.Logger) *connGuard {
	return &connGuard{Listener: ln, max: max, logger: logger, conns: map[net.Conn]*guardedState{}}
}

// Accept returns the next connection, making room for it at the cap.
func (g *connGuard) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		gc := &guardedConn{Conn: c, g: g}
		g.mu.Lock()
		var victim net.Conn
		if len(g.conns) >= g.max {
			victim = g.longestIdleLocked()
			if victim != nil {
				delete(g.conns, victim)
			}
			g.shedLocked()
		}
		full := len(g.conns) >= g.max
		if !full {
			g.seq++
			g.conns[gc] = &guardedState{state: http.StateNew, seq: g.seq}
		}
		g.mu.Unlock()
		if victim != nil {
			_ = victim.Close()
		}
		if full {
			_ = c.Close()
			continue
		}
		return gc, nil
	}
}

// longestIdleLocked returns the held connection idle the longest, between
// requests first, then not yet past its first request; nil when every one
// is being answered.
func (g *connGuard) longestIdleLocked() net.Conn {
	var best net.Conn
	var bestState *guardedState
	for c, st := range g.conns {
		if st.state != http.StateIdle && st.state != http.StateNew {
			continue
		}
		if bestState == nil || (st.state == http.StateIdle && bestState.state == http.StateNew) ||
			(st.state == bestState.state && st.seq < bestState.seq) {
			best, bestState = c, st
		}
	}
	return best
}

// shedLocked counts a connection closed at the cap and logs the count at
// most once per healthShedLogInterval.
func (g *connGuard) shedLocked() {
	g.shed++
	now := time.Now()
	if !g.lastLog.IsZero() && now.Sub(g.lastLog) < healthShedLogInterval {
		return
	}
	g.logger.Warn("health server at its connection cap; closing the longest idle connections",
		slog.Int("max_connections", g.max), slog.Uint64("closed", g.shed))
	g.shed, g.lastLog = 0, now
}

// connState is the http.Server's ConnState hook.
func (g *connGuard) connState(c net.Conn, state http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.conns[c]
	if !ok {
		return
	}
	if state == http.StateClosed || state == http.StateHijacked {
		delete(g.conns, c)
		return
	}
	g.seq++
	st.state, st.seq = state, g.seq
}

// held returns how many connections the guard holds.
func (g *connGuard) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// guardedConn frees its place in the guard when closed, whoever closes it.
type guardedConn struct {
	net.Conn
	g    *connGuard
	once sync.Once
}

func (c *guardedConn) Close() error {
	c.once.Do(func() {
		c.g.mu.Lock()
		delete(c.g.conns, c)
		c.g.mu.Unlock()
	})
	return c.Conn.Close()
}
