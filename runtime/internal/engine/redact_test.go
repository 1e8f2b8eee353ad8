package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactedErrorKeepsTheChain(t *testing.T) {
	err := redactedError{errors.Join(ErrStaleWrite, errors.New("dial redis://user:secret@host:6379"))}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the password shows: %v", err)
	}
	if !errors.Is(err, ErrStaleWrite) {
		t.Fatal("the chain is lost")
	}
}
