// Package connguard caps how many connections a small HTTP server holds,
// so that a flood of held connections neither starves the rest of the
// process of file descriptors nor keeps a new client out: at the cap, the
// connection idle the longest is closed to make room. The worker's health
// server stands behind one, where a probe that cannot connect restarts a
// healthy pod.
package connguard

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// shedLogInterval throttles the WARN a flood of connections causes to one
// line per interval.
const shedLogInterval = time.Minute

// Listener is a net.Listener that holds at most max connections. When a
// new one arrives at the cap, the connection idle (between requests, or not
// yet sent one) the longest is closed to make room: a request that is being
// answered is never cut, and a flood of held connections cannot keep a new
// client out. Only when every held connection is being answered is the new
// one closed. The http.Server serving it must report connection states
// through ConnState.
type Listener struct {
	net.Listener
	max    int
	server string
	logger *slog.Logger

	mu      sync.Mutex
	conns   map[net.Conn]*connState
	seq     uint64 // orders state changes: the lowest idle seq waited longest
	shed    uint64 // connections closed at the cap since the last log line
	lastLog time.Time
}

type connState struct {
	state http.ConnState
	seq   uint64
}

// New returns ln holding at most max connections. server names the server
// in the WARN line logged (at most once a minute) when connections are
// closed at the cap, so an operator knows which port is flooded.
func New(ln net.Listener, max int, server string, logger *slog.Logger) *Listener {
	return &Listener{Listener: ln, max: max, server: server, logger: logger, conns: map[net.Conn]*connState{}}
}

// Accept returns the next connection, making room for it at the cap.
func (g *Listener) Accept() (net.Conn, error) {
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
			g.conns[gc] = &connState{state: http.StateNew, seq: g.seq}
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
func (g *Listener) longestIdleLocked() net.Conn {
	var best net.Conn
	var bestState *connState
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
// most once per shedLogInterval.
func (g *Listener) shedLocked() {
	g.shed++
	now := time.Now()
	if !g.lastLog.IsZero() && now.Sub(g.lastLog) < shedLogInterval {
		return
	}
	g.logger.Warn(g.server+" at its connection cap; closing the longest idle connections",
		slog.Int("max_connections", g.max), slog.Uint64("closed", g.shed))
	g.shed, g.lastLog = 0, now
}

// ConnState is the http.Server's ConnState hook: it tells the guard which
// connections are idle, and so may be closed to make room.
func (g *Listener) ConnState(c net.Conn, state http.ConnState) {
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

// Held returns how many connections the guard holds, for tests and
// diagnostics.
func (g *Listener) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// guardedConn frees its place in the guard when closed, whoever closes it.
type guardedConn struct {
	net.Conn
	g    *Listener
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
