package fencing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

func TestCheckRefusesOnlyLowerTokens(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	before := Refusals()
	if err := Check(context.Background(), logger, "orders", 7, 7); err != nil {
		t.Fatalf("equal token (same run, next batch) refused: %v", err)
	}
	if err := Check(context.Background(), logger, "orders", 8, 7); err != nil {
		t.Fatalf("newer token refused: %v", err)
	}
	err := Check(context.Background(), logger, "orders", 6, 7)
	var stale *StaleWriterError
	if !errors.Is(err, ErrStaleWriter) || !errors.As(err, &stale) || stale.Token != 6 || stale.Stored != 7 || stale.Resource != "orders" {
		t.Fatalf("older token: err = %#v, want a StaleWriterError 6 < 7", err)
	}
	if got := Refusals() - before; got != 1 {
		t.Fatalf("refusals counted: %d, want 1", got)
	}
	if !strings.Contains(logs.String(), "fencing_token=6") || !strings.Contains(logs.String(), "stored_token=7") {
		t.Fatalf("the refusal log lacks both tokens:\n%s", logs.String())
	}
}

func TestTokenRefusesUnfencedRunsUnlessAllowed(t *testing.T) {
	fenced := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p", FencingToken: 42})
	if tok, unfenced, err := Token(fenced, "t", false); err != nil || tok != 42 || unfenced {
		t.Fatalf("fenced run: %d %v %v", tok, unfenced, err)
	}
	local := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p"})
	if _, _, err := Token(local, "t", false); !errors.Is(err, ErrUnfenced) || !strings.Contains(err.Error(), "allow_unfenced") ||
		!strings.Contains(err.Error(), "AGORA_DISTRIBUTED_REDIS_URL") || strings.Count(err.Error(), "fencing token 0") != 1 {
		t.Fatalf("unfenced run: err = %v, want ErrUnfenced naming allow_unfenced and AGORA_DISTRIBUTED_REDIS_URL once", err)
	}
	if _, _, err := Token(context.Background(), "t", false); !errors.Is(err, ErrUnfenced) {
		t.Fatalf("no lease at all: err = %v, want ErrUnfenced", err)
	}
	if tok, unfenced, err := Token(local, "t", true); err != nil || tok != 0 || !unfenced {
		t.Fatalf("allowed unfenced run: %d %v %v", tok, unfenced, err)
	}
	var logs bytes.Buffer
	WarnUnfenced(local, slog.New(slog.NewTextHandler(&logs, nil)), "t")
	if !strings.Contains(logs.String(), "unfenced write") || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("unfenced warning: %s", logs.String())
	}
}

func TestStaleWriterMatchesTheRuntimeSentinel(t *testing.T) {
	err := fmt.Errorf("sink orders: %w", Check(context.Background(), nil, "orders", 1, 2))
	if !errors.Is(err, runtime.ErrStaleWrite) || !errors.Is(err, ErrStaleWriter) {
		t.Fatalf("%v: want it to match runtime.ErrStaleWrite and ErrStaleWriter", err)
	}
	// The sentinels on the left stand for errors a caller holds.
	//lint:ignore SA1032 the order is the point: a bare sentinel held as an error must not match
	if errors.Is(ErrUnfenced, runtime.ErrStaleWrite) || errors.Is(runtime.ErrStaleWrite, ErrStaleWriter) {
		t.Fatal("only stale writes match runtime.ErrStaleWrite")
	}
}
