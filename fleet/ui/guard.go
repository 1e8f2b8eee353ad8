package ui

import (
	"sync"
	"time"
)

// Token guesses are limited per client (its IP address): a few wrong
// tokens within guessWindow are free, for typos; after that each one
// makes the client wait twice as long as the one before, up to
// guessMaxDelay, before any token it sends is even compared. So a
// thousand guesses within a minute take hours, while a user who mistypes
// twice notices nothing. Waiting is an answer (429 with Retry-After), not
// a held connection, so a guesser cannot pin the server's goroutines.
const (
	guessWindow   = time.Minute
	guessFree     = 5
	guessBase     = 250 * time.Millisecond
	guessMaxDelay = 5 * time.Minute
	// guessClients bounds the clients remembered; past it the stalest
	// are forgotten first.
	guessClients = 10_000
)

// guesses counts wrong tokens per client.
type guesses struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[string]*guessState
}

type guessState struct {
	streak int       // wrong tokens since the last quiet window
	until  time.Time // no token is compared before; the last wrong one's time when none is owed
}

func newGuesses(now func() time.Time) *guesses {
	return &guesses{now: now, by: map[string]*guessState{}}
}

// wait returns how long client must still wait before its next token is
// compared (0: now).
func (g *guesses) wait(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.by[client]
	if s == nil {
		return 0
	}
	if d := s.until.Sub(g.now()); d > 0 {
		return d
	}
	return 0
}

// wrong records a wrong token from client and returns the delay it now
// owes.
func (g *guesses) wrong(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	s := g.by[client]
	if s == nil {
		if len(g.by) >= guessClients {
			g.forgetStalest(now)
		}
		s = &guessState{}
		g.by[client] = s
	}
	if now.Sub(s.until) >= guessWindow {
		s.streak = 0
	}
	s.streak++
	s.until = now
	n := s.streak
	if n <= guessFree {
		return 0
	}
	d := guessMaxDelay
	if shift := n - guessFree - 1; shift < 20 {
		d = min(guessBase<<shift, guessMaxDelay)
	}
	s.until = now.Add(d)
	return d
}

// right forgets client's wrong tokens.
func (g *guesses) right(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.by, client)
}

// forgetStalest drops the clients past their quiet window, or, when every
// one is recent, the one whose wait ended first; g.mu is held.
func (g *guesses) forgetStalest(now time.Time) {
	var stalest string
	var at time.Time
	for c, s := range g.by {
		if now.Sub(s.until) >= guessWindow {
			delete(g.by, c)
			continue
		}
		if stalest == "" || s.until.Before(at) {
			stalest, at = c, s.until
		}
	}
	if len(g.by) >= guessClients {
		delete(g.by, stalest)
	}
}
