package ui

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/clocktest"
)

func TestGuessesDelayGrowsAndTheThousandthIsDelayed(t *testing.T) {
	clock := clocktest.NewFake(now)
	g := newGuesses(clock.Now)
	for i := 1; i <= guessFree; i++ {
		if d := g.wrong("10.0.0.1"); d != 0 || g.wait("10.0.0.1") != 0 {
			t.Fatalf("wrong token %d is delayed %s; the first %d are free", i, d, guessFree)
		}
	}
	prev := time.Duration(0)
	start := clock.Now()
	for i := guessFree + 1; i <= 1000; i++ {
		if w := g.wait("10.0.0.1"); w > 0 {
			t.Fatalf("guess %d: still owes %s after waiting", i, w)
		}
		d := g.wrong("10.0.0.1")
		if d <= 0 || d < prev || d > guessMaxDelay {
			t.Fatalf("guess %d: delay %s after %s", i, d, prev)
		}
		if g.wait("10.0.0.1") != d {
			t.Fatalf("guess %d: wait %s, want %s", i, g.wait("10.0.0.1"), d)
		}
		if g.wait("10.0.0.2") != 0 {
			t.Fatal("another client waits too")
		}
		prev = d
		clock.Advance(d) // a patient guesser waits exactly what it owes
	}
	if prev != guessMaxDelay {
		t.Errorf("the 1,000th wrong token's delay is %s, want %s", prev, guessMaxDelay)
	}
	if took := clock.Now().Sub(start); took < 24*time.Hour {
		t.Errorf("1,000 guesses took %s of waiting", took)
	}
	g.right("10.0.0.1")
	if g.wait("10.0.0.1") != 0 || g.wrong("10.0.0.1") != 0 {
		t.Error("a right token does not clear the client's count")
	}
}

func TestGuessesForgiveAfterAQuietWindow(t *testing.T) {
	clock := clocktest.NewFake(now)
	g := newGuesses(clock.Now)
	for range guessFree + 2 {
		clock.Advance(g.wrong("c"))
	}
	clock.Advance(guessWindow)
	if d := g.wrong("c"); d != 0 {
		t.Errorf("after a quiet minute a typo is delayed %s", d)
	}
}

func TestGuessesRememberABoundedNumberOfClients(t *testing.T) {
	clock := clocktest.NewFake(now)
	g := newGuesses(clock.Now)
	for i := range guessClients + 10 {
		g.wrong(string(rune(i)))
		clock.Advance(time.Millisecond)
	}
	if len(g.by) > guessClients {
		t.Errorf("%d clients remembered, bound %d", len(g.by), guessClients)
	}
}
