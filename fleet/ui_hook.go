package fleet

import (
	"context"
	"errors"
	"io"
	"sync"
)

// DefaultUIListen is where "fleet ui" listens unless told otherwise:
// loopback only, so the dashboard is not on the network by accident.
const DefaultUIListen = "127.0.0.1:8090"

// UIOptions configure the dashboard "fleet ui" serves.
type UIOptions struct {
	// Listen is the address (default DefaultUIListen).
	Listen string
	// Token enables the pause, resume and trigger actions; empty: read
	// from AGORA_UI_TOKEN, and when that is empty too the dashboard is
	// read-only.
	Token string
}

// UIServer serves the dashboard over b until ctx ends.
type UIServer func(ctx context.Context, b Backend, opts UIOptions, stdout, stderr io.Writer) error

var (
	uiMu     sync.Mutex
	uiServer UIServer
)

// RegisterUI sets the dashboard "fleet ui" runs. The fleet/ui package
// registers itself; runtime/distributed links it in.
func RegisterUI(s UIServer) {
	uiMu.Lock()
	defer uiMu.Unlock()
	uiServer = s
}

func serveUI(ctx context.Context, b Backend, opts UIOptions, stdout, stderr io.Writer) error {
	uiMu.Lock()
	s := uiServer
	uiMu.Unlock()
	if s == nil {
		return errors.New("no dashboard linked in (import github.com/agora-etl/agora/fleet/ui)")
	}
	return s(ctx, b, opts, stdout, stderr)
}
